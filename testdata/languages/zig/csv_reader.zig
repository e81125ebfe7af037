const std = @import("std");
const Allocator = std.mem.Allocator;

pub const Row = struct {
    name: []const u8,
    amount: i64,
};

pub const ParseError = error{ MissingField, BadAmount };

fn trimField(field: []const u8) []const u8 {
    return std.mem.trim(u8, field, " \t\r");
}

pub fn parseLine(line: []const u8, separator: u8) ParseError!Row {
    var fields = std.mem.splitScalar(u8, line, separator);
    const raw_name = fields.next() orelse return error.MissingField;
    const raw_amount = fields.next() orelse return error.MissingField;
    const name = trimField(raw_name);
    if (name.len == 0 or name.len > 64) {
        return error.MissingField;
    }
    const amount = std.fmt.parseInt(i64, trimField(raw_amount), 10) catch {
        std.log.warn("bad amount in line: {s}", .{line});
        return error.BadAmount;
    };
    if (amount < -1_000_000) {
        return error.BadAmount;
    }
    return Row{ .name = name, .amount = amount };
}

pub fn readAll(allocator: Allocator, text: []const u8) ![]Row {
    var rows = std.ArrayList(Row).init(allocator);
    errdefer rows.deinit();
    var lines = std.mem.splitScalar(u8, text, '\n');
    while (lines.next()) |line| {
        if (line.len == 0) continue;
        try rows.append(try parseLine(line, ';'));
    }
    return rows.toOwnedSlice();
}

pub fn total(rows: []const Row) i64 {
    var sum: i64 = 0;
    for (rows) |row| sum += row.amount;
    return sum;
}

test "a line with two fields parses" {
    const row = try parseLine("coffee; 42", ';');
    try std.testing.expectEqual(@as(i64, 42), row.amount);
}
