// `pybox repair`'s diff: the shape `diff -u` gives, checked against GNU diff's own output.
#include "client/unified_diff.hpp"

#include <catch2/catch.hpp>

#include <string>

using pybox::client::unified_diff;

TEST_CASE("Equal texts have no diff")
{
    CHECK(unified_diff("a\nb\n", "a\nb\n", "x", "y").empty());
    CHECK(unified_diff("", "", "x", "y").empty());
}

TEST_CASE("A changed line in the middle gets three lines of context each side")
{
    const std::string old_text = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
    const std::string new_text = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
    CHECK(unified_diff(old_text, new_text, "prog.py", "prog.py (repaired)") ==
          "--- prog.py\n+++ prog.py (repaired)\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
}

TEST_CASE("Changes far apart are separate hunks; near ones share one")
{
    std::string old_text, far, near;
    for (int i = 1; i <= 20; ++i) old_text += std::to_string(i) + "\n";
    far = old_text;
    far.replace(far.find("2\n"), 2, "two\n");
    far.replace(far.find("19\n"), 3, "nineteen\n");
    CHECK(unified_diff(old_text, far, "a", "b") ==
          "--- a\n+++ b\n@@ -1,5 +1,5 @@\n 1\n-2\n+two\n 3\n 4\n 5\n@@ -16,5 +16,5 @@\n 16\n 17\n 18\n-19\n+nineteen\n 20\n");
    near = old_text;
    near.replace(near.find("\n5\n") + 1, 2, "five\n");
    near.replace(near.find("\n11\n") + 1, 3, "eleven\n");
    CHECK(unified_diff(old_text, near, "a", "b") ==
          "--- a\n+++ b\n@@ -2,13 +2,13 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n 9\n 10\n-11\n+eleven\n 12\n 13\n 14\n");
}

TEST_CASE("Added and removed lines at the ends, and a missing last newline")
{
    CHECK(unified_diff("", "print(1)\n", "a", "b") == "--- a\n+++ b\n@@ -0,0 +1 @@\n+print(1)\n");
    CHECK(unified_diff("x\n", "", "a", "b") == "--- a\n+++ b\n@@ -1 +0,0 @@\n-x\n");
    CHECK(unified_diff("x", "x\n", "a", "b") ==
          "--- a\n+++ b\n@@ -1 +1 @@\n-x\n\\ No newline at end of file\n+x\n");
    CHECK(unified_diff("a\nb\n", "a\nb\nc\n", "a", "b") == "--- a\n+++ b\n@@ -1,2 +1,3 @@\n a\n b\n+c\n");
}

TEST_CASE("Texts too large to compare line by line are replaced whole, still a valid diff")
{
    std::string old_text, new_text;
    for (int i = 0; i < 2'100; ++i) {
        old_text += "old " + std::to_string(i) + "\n";
        new_text += "new " + std::to_string(i) + "\n";
    }
    const auto diff = unified_diff(old_text, new_text, "a", "b");
    CHECK_THAT(diff, Catch::StartsWith("--- a\n+++ b\n@@ -1,2100 +1,2100 @@\n-old 0\n"));
    CHECK_THAT(diff, Catch::EndsWith("+new 2099\n"));
}
