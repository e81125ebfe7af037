defmodule Shop.Inventory do
  @moduledoc """
  Stock levels of a small shop.
  """

  require Logger

  defstruct items: %{}, orders: []

  def new(items \\ %{}), do: %__MODULE__{items: items}

  @doc "Orders a batch of every item that runs low."
  def restock(%__MODULE__{items: items} = inventory, threshold \\ 5, batch \\ 20) do
    orders =
      items
      |> Enum.reject(fn {_name, count} -> count >= threshold end)
      |> Enum.map(fn {name, count} ->
        wanted = batch - count

        if wanted > 100 do
          Logger.warning("large order for #{name}: #{wanted}")
          %{item: name, quantity: 100}
        else
          %{item: name, quantity: wanted}
        end
      end)
      |> Enum.sort_by(& &1.quantity, :desc)

    {orders, %{inventory | orders: inventory.orders ++ orders}}
  end

  def total(%__MODULE__{orders: orders}) do
    orders |> Enum.map(& &1.quantity) |> Enum.sum()
  end

  def load(path) do
    path
    |> File.stream!()
    |> Stream.map(&String.trim/1)
    |> Stream.map(&String.split(&1, ","))
    |> Map.new(fn [name, count] -> {name, String.to_integer(count)} end)
    |> new()
  end
end
