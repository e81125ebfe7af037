using System;
using System.Collections.Generic;
using System.Linq;

namespace Hotel.Booking
{
    /// <summary>The reservations of one hotel.</summary>
    public class Reservations
    {
        private readonly List<Reservation> bookings = new();
        private readonly int rooms;

        public Reservations(int rooms) => this.rooms = rooms;

        public bool IsFree(DateTime night) =>
            bookings.Count(b => b.From <= night && night < b.To) < rooms;

        /// <summary>Books a stay, and returns its price, or null when the hotel is full.</summary>
        public decimal? Book(string guest, DateTime from, int nights, bool breakfast)
        {
            if (nights <= 0 || nights > 28)
            {
                throw new ArgumentOutOfRangeException(nameof(nights), "1 to 28 nights");
            }
            var price = 0m;
            for (var i = 0; i < nights; i++)
            {
                var night = from.AddDays(i);
                if (!IsFree(night))
                {
                    return null;
                }
                price += night.DayOfWeek is DayOfWeek.Saturday or DayOfWeek.Sunday ? 129.0m : 99.5m;
            }
            if (breakfast)
            {
                price += 12.5m * nights;
            }
            bookings.Add(new Reservation(guest, from, from.AddDays(nights)));
            Console.WriteLine($"booked {guest} for {nights} nights: {price:C}");
            return price;
        }

        public IEnumerable<string> Guests(DateTime night)
        {
            return bookings
                .Where(b => b.From <= night && night < b.To)
                .Select(b => b.Guest)
                .OrderBy(name => name);
        }

        public void Cancel(string guest)
        {
            var removed = bookings.RemoveAll(b => b.Guest == guest);
            if (removed == 0)
            {
                throw new InvalidOperationException($"no booking for {guest}");
            }
        }
    }
}
