package ledger

import (
	"errors"
	"fmt"
	"strings"
)

// Entry is one booked line of a ledger.
type Entry struct {
	Account string
	Cents   int64
	Memo    string
}

var errEmpty = errors.New("ledger: empty account")

/*
Balance sums the cents booked on one account.
*/
func Balance(entries []Entry, account string) (int64, error) {
	if strings.TrimSpace(account) == "" {
		return 0, errEmpty
	}
	var total int64
	for _, e := range entries {
		if e.Account != account {
			continue
		}
		total += e.Cents
	}
	return total, nil
}

// Summary renders the balances of every account, one per line.
func (l *Ledger) Summary(width int) string {
	var b strings.Builder
	seen := map[string]bool{}
	for _, e := range l.entries {
		if seen[e.Account] {
			continue
		}
		seen[e.Account] = true
		cents, _ := Balance(l.entries, e.Account)
		fmt.Fprintf(&b, "%-*s %d.%02d\n", width, e.Account, cents/100, cents%100)
	}
	return b.String()
}
