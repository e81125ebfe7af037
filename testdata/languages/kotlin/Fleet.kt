package com.example.rental

import java.time.LocalDate
import java.time.temporal.ChronoUnit

data class Car(val plate: String, val seats: Int, val electric: Boolean, var mileage: Long)

data class Rental(val car: Car, val from: LocalDate, val to: LocalDate)

/**
 * The cars of one rental station and what they are booked for.
 */
class Fleet(private val station: String) {
    private val cars = mutableListOf<Car>()
    private val rentals = mutableListOf<Rental>()

    fun add(car: Car) {
        require(cars.none { it.plate == car.plate }) { "duplicate plate ${car.plate}" }
        cars += car
    }

    fun available(day: LocalDate): List<Car> =
        cars.filter { car -> rentals.none { it.car == car && !day.isBefore(it.from) && day.isBefore(it.to) } }

    /** Prices a rental in cents, or returns null when no car fits. */
    fun quote(seats: Int, from: LocalDate, to: LocalDate, green: Boolean = false): Long? {
        val days = ChronoUnit.DAYS.between(from, to)
        if (days <= 0L || days > 30L) {
            throw IllegalArgumentException("rentals last 1 to 30 days, not ${days}")
        }
        val candidates = available(from)
            .filter { it.seats >= seats && (!green || it.electric) }
            .sortedBy { it.mileage }
        val car = candidates.firstOrNull() ?: return null
        var cents = days * 4_500L
        if (car.electric) {
            cents -= cents / 10
        }
        if (car.seats > 5) {
            cents += 1_200L * days
        }
        println("quote at $station: ${car.plate} for ${days} days")
        return cents
    }

    fun returned(plate: String, kilometres: Long) {
        val car = cars.first { it.plate == plate }
        car.mileage += kilometres
        rentals.removeIf { it.car.plate == plate }
    }

    companion object {
        const val MAX_CARS = 200
    }
}
