// Package shipping prices parcels for a small web shop.
package shipping

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Parcel is one box to send.
type Parcel struct {
	ID       string
	WeightG  int
	Country  string
	Fragile  bool
	Priority rune
}

var ErrTooHeavy = errors.New("shipping: parcel too heavy")

// Zone returns the price zone of a country code.
func Zone(country string) int {
	switch strings.ToUpper(country) {
	case "DE", "AT", "CH":
		return 1
	case "FR", "NL", "BE", "IT":
		return 2
	}
	return 3
}

// Quote prices every parcel in cents, the most expensive first.
func Quote(parcels []Parcel, base int, perKilo float64) ([]string, error) {
	lines := make([]string, 0, len(parcels))
	for _, p := range parcels {
		if p.WeightG > 31500 {
			return nil, fmt.Errorf("%s: %w", p.ID, ErrTooHeavy)
		}
		cents := base*Zone(p.Country) + int(perKilo*float64(p.WeightG)/1000.0)
		if p.Fragile {
			cents += 250
		}
		if p.Priority == 'X' {
			cents *= 2
		}
		lines = append(lines, fmt.Sprintf("%-12s %7d", p.ID, cents))
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i] > lines[j] })
	return lines, nil
}

// Heaviest returns the heaviest parcel, or false when there is none.
func Heaviest(parcels []Parcel) (Parcel, bool) {
	var best Parcel
	found := false
	for _, p := range parcels {
		if !found || p.WeightG > best.WeightG {
			best, found = p, true
		}
	}
	return best, found
}

// Label renders the address label of a parcel.
func (p Parcel) Label(name, street string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n%s\n%s", name, street, strings.ToUpper(p.Country))
	if p.Fragile {
		b.WriteString("\nFRAGILE")
	}
	return b.String()
}
