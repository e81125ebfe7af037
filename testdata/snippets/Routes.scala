package com.example.transit

import scala.collection.mutable
import scala.concurrent.duration._

/** Finds routes between the stops of one network. */
final class Routes(stops: Map[String, Stop], maxHops: Int = 6) extends Planner {
  private val cache = mutable.Map.empty[(String, String), List[Stop]]
  var misses: Long = 0L

  override def shortest(from: String, to: String): Option[List[Stop]] = {
    val key = (from, to)
    cache.get(key) match {
      case Some(path) => Some(path)
      case None =>
        misses += 1
        val found = search(stops(from), stops(to))
        found.foreach(path => cache(key) = path)
        found
    }
  }

  /* Breadth-first, at most maxHops stops deep. */
  private def search(start: Stop, goal: Stop): Option[List[Stop]] = {
    val queue = mutable.Queue(List(start))
    val seen = mutable.Set(start.id)
    while (queue.nonEmpty) {
      val path = queue.dequeue()
      if (path.head == goal) return Some(path.reverse)
      if (path.length < maxHops) {
        for (next <- path.head.links if !seen(next.id)) {
          seen += next.id
          queue.enqueue(next :: path)
        }
      }
    }
    None
  }

  def describe(path: List[Stop], sep: Char = '>'): String =
    path.map(s => f"${s.name}%-12s ${s.wait.toMinutes}%3d min").mkString(s" $sep ")
}
