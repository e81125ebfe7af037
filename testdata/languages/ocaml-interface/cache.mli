(** Bounded caches with expiry.

    Entries live until they expire or are evicted by newer ones. *)

type ('k, 'v) t
(** A cache from ['k] to ['v]. *)

type stats = {
  hits : int;
  misses : int;
  evictions : int;
}

exception Full of int

val create : ?capacity:int -> ?ttl:float -> unit -> ('k, 'v) t
(** [create ~capacity ~ttl ()] is an empty cache; [capacity] defaults to
    [1024] entries and [ttl] to [60.] seconds. *)

val find : ('k, 'v) t -> 'k -> 'v option

val add : ('k, 'v) t -> 'k -> 'v -> unit
(** @raise Full when the cache is full and nothing can be evicted. *)

module type STORE = sig
  type key
  type value
  val read : key -> value option
  val write : key -> value -> unit
  val delete : key -> bool
  val keys : ?prefix:string -> unit -> key list
  val size : unit -> int
  val flush : ?sync:bool -> ?timeout:float -> unit -> (unit, string) result
  external checksum : string -> int = "cache_store_checksum" [@@noalloc]
  val legacy_get : key -> value [@@deprecated "use read"]
end

module Make (S : STORE) : sig
  val get : S.key -> S.value option
  val stats : unit -> stats
end

val clear : ('k, 'v) t -> unit

val to_list : ('k, 'v) t -> ('k * 'v) list
