(* Stock keeping for a small warehouse. *)
open Printf

type item = {
  sku : string;
  name : string;
  mutable stock : int;
  reorder_level : int;
}

exception Out_of_stock of string

module Skus = Map.Make (String)

let load items =
  List.fold_left (fun acc item -> Skus.add item.sku item acc) Skus.empty items

let find inventory sku =
  match Skus.find_opt sku inventory with
  | Some item -> item
  | None -> raise (Out_of_stock sku)

(** Takes [quantity] units of [sku]; reorders when the stock runs low. *)
let take inventory ~sku ~quantity ~reorder =
  let item = find inventory sku in
  if quantity <= 0 then invalid_arg "take: quantity must be positive";
  if item.stock < quantity then begin
    eprintf "only %d of %s left\n" item.stock item.name;
    raise (Out_of_stock sku)
  end;
  item.stock <- item.stock - quantity;
  let missing = item.reorder_level - item.stock in
  if missing > 0 then begin
    let batch = max missing 25 in
    printf "reordering %d x %s\n" batch item.name;
    reorder item batch
  end;
  item.stock

let low_items inventory =
  Skus.fold
    (fun _ item acc -> if item.stock < item.reorder_level then item :: acc else acc)
    inventory []

let report inventory =
  Skus.iter
    (fun sku item -> printf "%-10s %-20s %5d\n" sku item.name item.stock)
    inventory
