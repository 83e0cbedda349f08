// Reading the one program out of a model's answer, and telling repeated programs apart.
#include "common/limits.hpp"
#include "daemon/repair/code_block.hpp"

#include <catch2/catch.hpp>

#include <string>
#include <variant>

using pybox::repair::NoProgram;
using pybox::repair::program_from_answer;
using pybox::repair::same_program;

namespace {

std::string program(std::string_view answer)
{
    auto read = program_from_answer(answer);
    INFO(answer);
    if (auto* none = std::get_if<NoProgram>(&read)) FAIL(none->why);
    return std::get<std::string>(read);
}

std::string refusal(std::string_view answer)
{
    auto read = program_from_answer(answer);
    INFO(answer);
    REQUIRE(std::holds_alternative<NoProgram>(read));
    return std::get<NoProgram>(read).why;
}

}  // namespace

TEST_CASE("The one fenced block of an answer is its program, the text around it ignored")
{
    CHECK(program("Here is the fix:\n```python\nprint(1)\n```\nIt now prints 1.") == "print(1)\n");
    CHECK(program("```\nx = 1\nprint(x)\n```") == "x = 1\nprint(x)\n");
    CHECK(program("```py\r\nprint(2)\r\n```\r\n") == "print(2)\n");
    CHECK(program("  ```Python3 title=fix.py\nprint(3)\n  ```") == "print(3)\n");
    CHECK(program("~~~python\nprint('```')\n~~~") == "print('```')\n");
    CHECK(program("````python\n```\nnot a fence inside\n````") == "```\nnot a fence inside\n");
    CHECK(program("```python\n\n    indented()\n\n```") == "\n    indented()\n\n");
}

TEST_CASE("An answer without exactly one usable block has no program, and says why")
{
    CHECK(refusal("print(1)") == "The answer has no fenced code block.");
    CHECK(refusal("") == "The answer has no fenced code block.");
    CHECK(refusal("`inline` and ``` not a fence") == "The answer has no fenced code block.");
    CHECK(refusal("```python\na()\n```\nor\n```python\nb()\n```") ==
          "The answer has 2 fenced code blocks; exactly one was asked for.");
    CHECK(refusal("```python\nprint(1)\n") ==
          "The answer's code block is not closed (the answer may have been cut at max_tokens).");
    CHECK(refusal("```bash\nrm -rf /\n```") == "The answer's code block is marked \"bash\", not Python.");
    CHECK(refusal("```python\n   \n\n```") == "The answer's code block is empty.");
    CHECK(refusal("```python\nprint('\xff')\n```") == "The answer's program is not UTF-8 text.");
    CHECK(refusal(std::string("```python\nprint(1)\0\n```", 23)) == "The answer's program holds a NUL byte.");
    CHECK(refusal("    ```python\nprint(1)\n    ```") == "The answer has no fenced code block.");  // indented code, not a fence
}

TEST_CASE("A program over the source limit is refused; one at the limit is read")
{
    const std::string line = "#" + std::string(63, 'x') + "\n";
    std::string body;
    while (body.size() + line.size() <= pybox::limits::k_max_source_bytes) body += line;
    body.append(pybox::limits::k_max_source_bytes - body.size() - 1, 'y');
    body += "\n";
    REQUIRE(body.size() == pybox::limits::k_max_source_bytes);
    CHECK(program("```python\n" + body + "```").size() == pybox::limits::k_max_source_bytes);
    CHECK_THAT(refusal("```python\n" + body + "z\n```"), Catch::Contains("65538 bytes; a program may have at most 65536"));
}

TEST_CASE("Programs that differ only in line endings and trailing white space are the same")
{
    CHECK(same_program("print(1)\n", "print(1)"));
    CHECK(same_program("a = 1  \r\nprint(a)\n\n\n", "a = 1\nprint(a)"));
    CHECK_FALSE(same_program("print(1)\n", "print(2)\n"));
    CHECK_FALSE(same_program("if x:\n    y()\n", "if x:\n  y()\n"));  // indentation is meaning
}
