(** An order book for a single instrument. *)

type side = Buy | Sell

type order = {
  id : int;
  side : side;
  price : float;
  mutable quantity : int;
}

exception Unknown_order of int

val describe : order -> string
(** One line per order, for logs. *)

val fill : order list -> order -> order list * order
(** [fill book incoming] matches [incoming] against [book], best price first. *)

class ledger : object
  method record : order -> int
  method size : int
end

val cancel : order list -> int -> order list
(** @raise Unknown_order when no order has this id. *)

module type PRICED = sig
  type t
  val price : t -> float
  val with_price : ?round:bool -> t -> float -> t
end
