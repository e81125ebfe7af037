# Monthly sales summaries.
library(stats)

summarize_sales <- function(sales, months = 12, currency = "EUR") {
  stopifnot(is.data.frame(sales), months > 0)
  recent <- sales[sales$month > max(sales$month) - months, ]
  totals <- aggregate(amount ~ region, data = recent, FUN = sum)
  totals$share <- round(100 * totals$amount / sum(totals$amount), 1)
  for (i in seq_len(nrow(totals))) {
    if (is.na(totals$amount[i])) {
      totals$amount[i] <- 0
    }
  }
  attr(totals, "currency") <- currency
  totals[order(-totals$amount), ]
}

format_total <- function(x, digits = 2L) {
  if (is.null(attr(x, "currency"))) {
    formatC(x, format = "f", digits = digits)
  } else {
    paste0(formatC(x, format = "f", digits = digits), " ", attr(x, "currency"))
  }
}
