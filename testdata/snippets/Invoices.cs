using System;
using System.Collections.Generic;
using System.Linq;

namespace Billing
{
    /// <summary>Keeps the invoices of one account.</summary>
    public sealed class Invoices
    {
        private readonly List<Invoice> items = new();

        public decimal Threshold { get; set; } = 250.0m;

        public Invoices(IEnumerable<Invoice> seed) => items.AddRange(seed);

        /// <summary>
        /// Totals the unpaid invoices older than <paramref name="days"/>.
        /// </summary>
        public async Task<decimal> OverdueAsync(int days, DateTime now)
        {
            decimal total = 0;
            foreach (var invoice in items.Where(i => !i.Paid))
            {
                var age = (now - invoice.Issued).TotalDays;
                if (age <= days)
                {
                    continue;
                }
                total += invoice.Amount;
                await Task.Delay(10);
            }
            Console.WriteLine($"overdue: {total:C} after {days} days");
            return total > Threshold ? total : 0m;
        }

        protected internal static string Describe(Invoice invoice, char separator = ';')
        {
            var parts = new[] { invoice.Number, invoice.Customer, @"C:\archive" };
            return string.Join(separator, parts) + $@"{invoice.Amount,10}";
        }
    }
}
