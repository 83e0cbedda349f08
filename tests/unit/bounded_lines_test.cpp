#include "util/bounded_lines.hpp"

#include <catch2/catch.hpp>

#include <optional>
#include <string>

using pybox::util::BoundedLines;

TEST_CASE("Bounded lines come out whole whatever pieces the stream arrives in", "[bounded_lines]")
{
    BoundedLines lines(16);
    CHECK(lines.add("one\ntw"));
    CHECK(lines.next() == std::optional<std::string>("one"));
    CHECK_FALSE(lines.next());
    CHECK(lines.partial());
    CHECK(lines.add("o\n\nthree\n"));
    CHECK(lines.next() == std::optional<std::string>("two"));
    CHECK(lines.next() == std::optional<std::string>(""));
    CHECK(lines.next() == std::optional<std::string>("three"));
    CHECK_FALSE(lines.next());
    CHECK_FALSE(lines.partial());
}

TEST_CASE("A line of exactly the bound is taken; one byte more overflows the splitter for good", "[bounded_lines]")
{
    BoundedLines lines(4);
    CHECK(lines.add("abcd\n"));
    CHECK(lines.next() == std::optional<std::string>("abcd"));
    CHECK(lines.add("ab"));
    CHECK_FALSE(lines.add("cde"));
    CHECK(lines.overflowed());
    CHECK_FALSE(lines.add("\nok\n"));
    CHECK_FALSE(lines.next());
}

TEST_CASE("Whole lines before an overflowing one in the same piece are dropped with it", "[bounded_lines]")
{
    BoundedLines lines(4);
    CHECK_FALSE(lines.add("ok\ntoo long\n"));
    CHECK_FALSE(lines.next());
}
