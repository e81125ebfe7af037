defmodule Billing.InvoiceTotals do
  @moduledoc """
  Totals of invoices, per customer and per month.
  """

  alias Billing.{Invoice, Customer}

  @vat_rate 0.21

  def by_customer(invoices, opts \\ []) do
    currency = Keyword.get(opts, :currency, "EUR")

    invoices
    |> Enum.reject(&(&1.status == :void))
    |> Enum.group_by(& &1.customer_id)
    |> Enum.map(fn {customer_id, items} ->
      total = items |> Enum.map(& &1.amount) |> Enum.sum()
      %{customer: customer_id, total: with_vat(total), currency: currency}
    end)
    |> Enum.sort_by(& &1.total, :desc)
  end

  def describe(%Customer{name: name}, total) do
    "#{name} owes #{:erlang.float_to_binary(total, decimals: 2)}"
  end

  defp with_vat(amount) when is_number(amount), do: amount * (1 + @vat_rate)

  defp with_vat(_), do: 0
end
