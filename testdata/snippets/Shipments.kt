package com.example.logistics

import java.time.Duration
import java.time.Instant

/**
 * Plans the shipments of one warehouse.
 */
class Shipments(private val warehouse: String, private val capacity: Int = 40) : Planner {
    private val queue = ArrayDeque<Parcel>()
    var delayed: Int = 0
        private set

    override fun plan(parcels: List<Parcel>, now: Instant): List<Route> {
        val routes = mutableListOf<Route>()
        var load = 0
        for (parcel in parcels.sortedBy { it.weight }) {
            if (load + parcel.weight > capacity) {
                delayed++
                continue
            }
            load += parcel.weight
            routes += Route(parcel.destination, now + Duration.ofHours(2L))
        }
        println("planned ${routes.size} routes from $warehouse")
        return routes
    }

    /* Parcels that waited too long, oldest first. */
    fun overdue(limit: Duration = Duration.ofDays(3)): List<Parcel> =
        queue.filter { Duration.between(it.received, Instant.now()) > limit }
            .sortedByDescending { it.received }

    private suspend fun drain(batch: Int): Int {
        var moved = 0
        while (queue.isNotEmpty() && moved < batch) {
            val next = queue.removeFirst()
            if (next.fragile == true) {
                queue.addLast(next)
                break
            }
            moved += 1
        }
        return moved
    }
}
