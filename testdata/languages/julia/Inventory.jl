"""
Stock levels of a small shop.
"""
module Inventory

export Stock, restock!, total

struct Order
    item::String
    quantity::Int
end

mutable struct Stock
    items::Dict{String,Int}
    orders::Vector{Order}
end

Stock(items) = Stock(items, Order[])

"""
    restock!(stock; threshold=5, batch=20)

Orders a batch of every item that runs low.
"""
function restock!(stock::Stock; threshold::Int=5, batch::Int=20)
    orders = Order[]
    for (name, count) in stock.items
        count >= threshold && continue
        wanted = batch - count
        if wanted > 100
            @warn "large order for $name: $(wanted)"
            wanted = 100
        end
        push!(orders, Order(name, wanted))
    end
    sort!(orders; by=o -> o.quantity, rev=true)
    append!(stock.orders, orders)
    return orders
end

total(stock::Stock) = sum(o.quantity for o in stock.orders; init=0)

function load(path::AbstractString)
    items = Dict{String,Int}()
    for line in eachline(path)
        name, count = split(line, ',')
        items[String(name)] = parse(Int, count)
    end
    return Stock(items)
end

end # module
