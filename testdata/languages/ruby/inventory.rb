# frozen_string_literal: true

require "logger"

# Stock levels of a small shop.
module Shop
  class Inventory
    LOG = Logger.new($stderr)

    attr_reader :items

    def initialize(items = {})
      @items = items
      @orders = []
    end

    # Orders a batch of every item that runs low.
    def restock(threshold = 5, batch = 20)
      orders = []
      @items.each do |name, count|
        next if count >= threshold

        wanted = batch - count
        if wanted > 100
          LOG.warn("large order for #{name}: #{wanted}")
          wanted = 100
        end
        orders << { item: name, quantity: wanted }
      end
      orders.sort_by! { |order| -order[:quantity] }
      @orders.concat(orders)
      orders
    end

    def total
      @orders.sum { |order| order[:quantity] }
    end

    def to_s
      "#<Inventory #{@items.size} items, #{@orders.size} orders>"
    end

    def self.load(path)
      new(File.readlines(path, chomp: true).to_h { |line| line.split(",") })
    end
  end
end
