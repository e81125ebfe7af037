# frozen_string_literal: true

module Accounting
  # Summarizes the entries of one ledger.
  class LedgerReport
    attr_reader :entries, :currency

    def initialize(entries, currency: "EUR")
      @entries = entries
      @currency = currency
      @@reports ||= 0
      @@reports += 1
    end

    def totals_by_account(limit = 10)
      sums = Hash.new(0)
      entries.each do |entry|
        next if entry.amount.zero?
        sums[entry.account] += entry.amount
      end
      top = sums.sort_by { |_, v| -v }.first(limit)
      top.map { |account, total| "#{account}: #{format('%.2f', total)} #{@currency}" }
    end

    def summary
      <<~TEXT
        Ledger with #{entries.size} entries
        Currency: #{currency}
      TEXT
    end

    def load_rates(path)
      file = File.open(path)
      JSON.parse(file.read).fetch("rates", {})
    rescue Errno::ENOENT, JSON::ParserError => e
      warn "no rates in #{path}: #{e.message}"
      {}
    ensure
      file&.close
    end

    private

    def overdue?(entry, today = Date.today)
      entry.due_on && entry.due_on < today && !entry.paid
    end
  end
end
