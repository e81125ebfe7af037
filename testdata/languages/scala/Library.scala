package org.example.library

import java.time.LocalDate
import scala.collection.mutable

final case class Book(isbn: String, title: String, author: String, copies: Int)

final case class Loan(isbn: String, member: Long, due: LocalDate)

/** The books of one branch and who has borrowed them. */
class Library(branch: String, maxLoans: Int = 5) {
  private val books = mutable.Map.empty[String, Book]
  private val loans = mutable.ListBuffer.empty[Loan]

  def add(book: Book): Unit =
    books.updateWith(book.isbn) {
      case Some(old) => Some(old.copy(copies = old.copies + book.copies))
      case None      => Some(book)
    }

  def onLoan(isbn: String): Int = loans.count(_.isbn == isbn)

  /** Lends a book, returning the due date or why it cannot be lent. */
  def lend(isbn: String, member: Long, today: LocalDate, weeks: Int): Either[String, LocalDate] = {
    val book = books.getOrElse(isbn, return Left(s"unknown book $isbn"))
    val borrowed = loans.filter(_.member == member)
    if (borrowed.size >= maxLoans) {
      return Left(s"member $member already has ${borrowed.size} books")
    }
    if (onLoan(isbn) >= book.copies) {
      return Left("all copies are out")
    }
    val overdue = borrowed.exists(loan => loan.due.isBefore(today))
    if (overdue) {
      Left(f"member $member%d has overdue books")
    } else {
      val due = today.plusWeeks(math.min(weeks, 6).toLong)
      loans += Loan(isbn, member, due)
      println(s"$branch: lent ${book.title} until $due")
      Right(due)
    }
  }

  def giveBack(isbn: String, member: Long): Boolean = {
    val index = loans.indexWhere(l => l.isbn == isbn && l.member == member)
    if (index < 0) false
    else {
      loans.remove(index)
      true
    }
  }

  def byAuthor(author: String): Seq[String] =
    books.values.filter(_.author.equalsIgnoreCase(author)).map(_.title).toSeq.sorted
}
