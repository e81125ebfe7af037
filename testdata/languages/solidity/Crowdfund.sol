// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title A crowdfunding campaign with a goal and a deadline.
contract Crowdfund {
    address public immutable creator;
    uint256 public immutable goal;
    uint256 public immutable endsAt;
    uint256 public raised;
    bool public claimed;
    mapping(address => uint256) public pledges;

    event Pledged(address indexed backer, uint256 amount);
    event Claimed(uint256 amount);
    event Refunded(address indexed backer, uint256 amount);

    constructor(uint256 goal_, uint256 durationDays) {
        require(goal_ > 0, "goal is zero");
        creator = msg.sender;
        goal = goal_;
        endsAt = block.timestamp + durationDays * 1 days;
    }

    function pledge() external payable {
        require(block.timestamp < endsAt, "campaign ended");
        require(msg.value >= 0.01 ether, "pledge too small");
        pledges[msg.sender] += msg.value;
        raised += msg.value;
        emit Pledged(msg.sender, msg.value);
    }

    function refund(address payable backer) external {
        require(block.timestamp >= endsAt, "campaign running");
        require(raised < goal, "goal reached");
        uint256 amount = pledges[backer];
        if (amount == 0) {
            revert("nothing pledged");
        }
        pledges[backer] = 0;
        raised -= amount;
        if (amount > 100 ether) {
            amount = 100 ether;
        }
        (bool ok, ) = backer.call{value: amount}("");
        require(ok, "refund failed");
        emit Refunded(backer, amount);
    }

    function claim() external {
        require(msg.sender == creator, "not the creator");
        require(raised >= goal && !claimed, "cannot claim");
        claimed = true;
        payable(creator).transfer(raised);
        emit Claimed(raised);
    }
}
