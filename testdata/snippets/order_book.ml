(* An order book for a single instrument: bids and asks by price. *)
open Printf

type side = Buy | Sell

type order = {
  id : int;
  side : side;
  price : float;
  mutable quantity : int;
}

exception Unknown_order of int

module Prices = Map.Make (Float)

let describe = function
  | { side = Buy; price; quantity; _ } -> sprintf "BUY %d @ %.2f" quantity price
  | { side = Sell; price; quantity; _ } -> sprintf "SELL %d @ %.2f" quantity price

(** Matches an incoming order against the resting ones, best price first. *)
let rec fill book incoming =
  match book with
  | [] -> ([], incoming)
  | best :: rest when incoming.quantity > 0 ->
      let traded = min best.quantity incoming.quantity in
      best.quantity <- best.quantity - traded;
      incoming.quantity <- incoming.quantity - traded;
      printf "traded %d at %.2f\n" traded best.price;
      if best.quantity = 0 then fill rest incoming
      else
        let remaining, left = fill rest incoming in
        (best :: remaining, left)
  | _ -> (book, incoming)

class ledger = object (self)
  val mutable entries = []
  method record (o : order) = entries <- o :: entries; self#size
  method size = List.length entries
end

let cancel book id =
  match List.partition (fun o -> o.id = id) book with
  | [], _ -> raise (Unknown_order id)
  | _, rest -> rest
