// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title Holds a payment until the buyer confirms delivery.
contract Escrow {
    enum Status { Pending, Released, Refunded }

    address public immutable buyer;
    address payable public immutable seller;
    uint256 public deadline;
    Status public status;

    event Released(address indexed to, uint256 amount);
    error NotBuyer(address caller);

    modifier onlyBuyer() {
        if (msg.sender != buyer) revert NotBuyer(msg.sender);
        _;
    }

    constructor(address payable seller_, uint256 days_) payable {
        require(msg.value > 0, "nothing to hold");
        buyer = msg.sender;
        seller = seller_;
        deadline = block.timestamp + days_ * 1 days;
    }

    function release() external onlyBuyer {
        require(status == Status.Pending, "settled");
        status = Status.Released;
        uint256 amount = address(this).balance;
        (bool ok, ) = seller.call{value: amount}("");
        require(ok, "transfer failed");
        emit Released(seller, amount);
    }

    function refund() external {
        require(block.timestamp > deadline && status == Status.Pending, "too early");
        status = Status.Refunded;
        payable(buyer).transfer(address(this).balance);
    }
}
