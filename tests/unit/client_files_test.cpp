// The files of `pybox exec --in/--out` on the client's side, against real temporary folders:
// collect_input_files (names, caps, links and FIFOs in folders), check_output_folder and
// write_output_files (names from a hostile box, links inside DIR, existing files, --force, no
// temporary file left), and the report's lines. No daemon needed.
#include "client/files_in.hpp"
#include "client/files_out.hpp"

#include "common/limits.hpp"
#include "proto/files.hpp"

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace fs = std::filesystem;
using pybox::client::check_output_folder;
using pybox::client::collect_input_files;
using pybox::client::OutputFileResult;
using pybox::client::OutputWriteReport;
using pybox::client::render_output_report;
using pybox::client::write_output_files;
using pybox::proto::FileContent;
using Outcome = OutputFileResult::Outcome;

// A fresh folder (mkdtemp) removed with everything in it at the end; links in it are not followed.
class TempFolder {
public:
    TempFolder()
    {
        std::string pattern = (fs::temp_directory_path() / "pybox-files-test-XXXXXX").string();
        REQUIRE(::mkdtemp(pattern.data()) != nullptr);
        m_path = pattern;
    }
    ~TempFolder()
    {
        std::error_code ignored;
        fs::remove_all(m_path, ignored);
    }
    TempFolder(const TempFolder&) = delete;
    TempFolder& operator=(const TempFolder&) = delete;
    fs::path operator/(const std::string& name) const { return m_path / name; }
    const fs::path& path() const { return m_path; }

private:
    fs::path m_path;
};

// The working folder changed for the lifetime of the object.
class WorkingFolder {
public:
    explicit WorkingFolder(const fs::path& folder) : m_before(fs::current_path()) { fs::current_path(folder); }
    ~WorkingFolder() { fs::current_path(m_before); }
    WorkingFolder(const WorkingFolder&) = delete;
    WorkingFolder& operator=(const WorkingFolder&) = delete;

private:
    fs::path m_before;
};

void write_file(const fs::path& path, const std::string& bytes)
{
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << bytes;
}

std::string read_file(const fs::path& path)
{
    std::ifstream file(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

std::vector<std::string> names_of(const std::vector<FileContent>& files)
{
    std::vector<std::string> names;
    for (const FileContent& file : files) names.push_back(file.name);
    return names;
}

// Every entry under `root` (links listed, not followed), relative, sorted.
std::vector<std::string> tree(const fs::path& root)
{
    std::vector<std::string> entries;
    for (const auto& entry : fs::recursive_directory_iterator(root))
        entries.push_back(entry.path().lexically_relative(root).generic_string());
    std::sort(entries.begin(), entries.end());
    return entries;
}

bool holds_temporary_file(const fs::path& root)
{
    for (const auto& entry : fs::recursive_directory_iterator(root))
        if (entry.path().filename().string().starts_with(".pybox-")) return true;
    return false;
}

bool contains(const std::string& text, const std::string& part)
{
    return text.find(part) != std::string::npos;
}

mode_t current_umask()
{
    const mode_t mask = ::umask(0);
    ::umask(mask);
    return mask;
}

}  // namespace

// ---- collect_input_files ----------------------------------------------------------------------

TEST_CASE("A file named with --in is sent under its base name with its exact bytes", "[files]")
{
    TempFolder temp;
    const std::string bytes("a\0b\xff\n", 5);
    write_file(temp / "nested/data.bin", bytes);
    const auto files = collect_input_files({temp / "nested/data.bin"});
    REQUIRE(files.has_value());
    CHECK(*files == std::vector<FileContent>{{"data.bin", bytes}});
}

TEST_CASE("A symbolic link named with --in is followed and sent under the link's name", "[files]")
{
    TempFolder temp;
    write_file(temp / "real.txt", "real");
    fs::create_symlink(temp / "real.txt", temp / "link.txt");
    write_file(temp / "folder/x.txt", "x");
    fs::create_directory_symlink(temp / "folder", temp / "linked-folder");
    const auto files = collect_input_files({temp / "link.txt", temp / "linked-folder"});
    REQUIRE(files.has_value());
    CHECK(*files == std::vector<FileContent>{{"link.txt", "real"}, {"linked-folder/x.txt", "x"}});
}

TEST_CASE("A folder named with --in sends every regular file under it as folder/path, in name order", "[files]")
{
    TempFolder temp;
    write_file(temp / "data/b.txt", "b");
    write_file(temp / "data/a/z.txt", "z");
    write_file(temp / "data/a-b.txt", "ab");
    write_file(temp / "data/sub/deeper/c.txt", "c");
    write_file(temp / "single.txt", "s");
    const auto files = collect_input_files({temp / "single.txt", temp / "data"});
    REQUIRE(files.has_value());
    CHECK(*files == std::vector<FileContent>{{"single.txt", "s"},
                                             {"data/a-b.txt", "ab"},
                                             {"data/a/z.txt", "z"},
                                             {"data/b.txt", "b"},
                                             {"data/sub/deeper/c.txt", "c"}});
}

TEST_CASE("A folder named as \".\", with a trailing '/' or through \"..\" is sent under its real name", "[files]")
{
    TempFolder temp;
    write_file(temp / "data/x.txt", "x");
    fs::create_directories(temp / "data/sub");
    const std::vector<std::string> expected{"data/x.txt"};
    for (const fs::path& path : {temp / "data/", temp / "data/.", temp / "data/sub/..", temp / "data/sub/../"}) {
        INFO(path);
        const auto files = collect_input_files({path});
        REQUIRE(files.has_value());
        CHECK(names_of(*files) == expected);
    }
    WorkingFolder inside(temp / "data/sub");
    for (const fs::path& path : {fs::path(".."), fs::path("../"), fs::path("../.")}) {
        INFO(path);
        const auto files = collect_input_files({path});
        REQUIRE(files.has_value());
        CHECK(names_of(*files) == expected);
    }
    WorkingFolder at_data(temp / "data");
    const auto files = collect_input_files({"."});
    REQUIRE(files.has_value());
    CHECK(names_of(*files) == expected);
}

TEST_CASE("An empty folder adds no input", "[files]")
{
    TempFolder temp;
    fs::create_directories(temp / "data/empty");
    fs::create_directories(temp / "data/only/folders");
    write_file(temp / "data/x.txt", "x");
    const auto files = collect_input_files({temp / "data"});
    REQUIRE(files.has_value());
    CHECK(names_of(*files) == std::vector<std::string>{"data/x.txt"});
    const auto none = collect_input_files({temp / "data/empty"});
    REQUIRE(none.has_value());
    CHECK(none->empty());
}

TEST_CASE("A missing input is refused with file_missing, naming it", "[files]")
{
    TempFolder temp;
    write_file(temp / "here.txt", "x");
    const auto files = collect_input_files({temp / "here.txt", temp / "not-here.txt"});
    REQUIRE_FALSE(files.has_value());
    CHECK(files.error().code == "file_missing");
    CHECK(contains(files.error().message, (temp / "not-here.txt").string()));
    CHECK(contains(files.error().message, "does not exist"));
}

TEST_CASE("A symbolic link inside a folder named with --in is refused, naming it, and not followed", "[files]")
{
    TempFolder temp;
    write_file(temp / "secret.txt", "secret");
    write_file(temp / "data/a.txt", "a");
    fs::create_symlink(temp / "secret.txt", temp / "data/leak.txt");
    const auto files = collect_input_files({temp / "data"});
    REQUIRE_FALSE(files.has_value());
    CHECK(files.error().code == "input_files_invalid");
    CHECK(contains(files.error().message, (temp / "data/leak.txt").string()));
    CHECK(contains(files.error().message, "a symbolic link"));
}

TEST_CASE("A symbolic link to a folder inside a named folder is refused, not walked", "[files]")
{
    TempFolder temp;
    write_file(temp / "elsewhere/secret.txt", "secret");
    fs::create_directories(temp / "data");
    fs::create_directory_symlink(temp / "elsewhere", temp / "data/linked");
    const auto files = collect_input_files({temp / "data"});
    REQUIRE_FALSE(files.has_value());
    CHECK(files.error().code == "input_files_invalid");
    CHECK(contains(files.error().message, (temp / "data/linked").string()));
}

TEST_CASE("A FIFO inside a named folder, or named itself, is refused without waiting on it", "[files]")
{
    TempFolder temp;
    write_file(temp / "data/a.txt", "a");
    REQUIRE(::mkfifo((temp / "data/pipe").c_str(), 0600) == 0);
    const auto in_folder = collect_input_files({temp / "data"});
    REQUIRE_FALSE(in_folder.has_value());
    CHECK(in_folder.error().code == "input_files_invalid");
    CHECK(contains(in_folder.error().message, (temp / "data/pipe").string()));
    CHECK(contains(in_folder.error().message, "a FIFO"));

    const auto named = collect_input_files({temp / "data/pipe"});
    REQUIRE_FALSE(named.has_value());
    CHECK(named.error().code == "input_files_invalid");
    CHECK(contains(named.error().message, "a FIFO"));
}

TEST_CASE("A device named with --in is refused", "[files]")
{
    const auto files = collect_input_files({"/dev/null"});
    REQUIRE_FALSE(files.has_value());
    CHECK(files.error().code == "input_files_invalid");
    CHECK(contains(files.error().message, "/dev/null"));
    CHECK(contains(files.error().message, "a device"));
}

TEST_CASE("The root folder cannot be an input: it has no name", "[files]")
{
    const auto files = collect_input_files({"/"});
    REQUIRE_FALSE(files.has_value());
    CHECK(files.error().code == "input_files_invalid");
    CHECK(contains(files.error().message, "root folder"));
}

TEST_CASE("Two inputs with the same base name are refused", "[files]")
{
    TempFolder temp;
    write_file(temp / "one/x.txt", "1");
    write_file(temp / "two/x.txt", "2");
    const auto files = collect_input_files({temp / "one/x.txt", temp / "two/x.txt"});
    REQUIRE_FALSE(files.has_value());
    CHECK(files.error().code == "input_files_invalid");
    CHECK(contains(files.error().message, "\"x.txt\""));
    CHECK(contains(files.error().message, "twice"));
}

TEST_CASE("An input file beside an input folder of the same name is refused", "[files]")
{
    TempFolder temp;
    write_file(temp / "one/a", "file a");
    write_file(temp / "two/a/b", "file a/b");
    const auto files = collect_input_files({temp / "one/a", temp / "two/a"});
    REQUIRE_FALSE(files.has_value());
    CHECK(files.error().code == "input_files_invalid");
    CHECK(contains(files.error().message, "also a folder"));
}

TEST_CASE("An input named out, or a folder named out, is refused: it would hide the output folder", "[files]")
{
    TempFolder temp;
    write_file(temp / "file/out", "x");
    write_file(temp / "folder/out/x.txt", "x");
    write_file(temp / "ok/outside.txt", "x");
    for (const fs::path& path : {temp / "file/out", temp / "folder/out"}) {
        INFO(path);
        const auto files = collect_input_files({path});
        REQUIRE_FALSE(files.has_value());
        CHECK(files.error().code == "input_files_invalid");
        CHECK(contains(files.error().message, "output folder"));
    }
    CHECK(collect_input_files({temp / "ok/outside.txt"}).has_value());
}

TEST_CASE("An input whose name holds a newline, is not UTF-8 or is over 255 bytes is refused", "[files]")
{
    TempFolder temp;
    write_file(temp / "newline/bad\nname.txt", "x");
    write_file(temp / "utf8/bad\xff.txt", "x");
    write_file(temp / "long" / std::string(pybox::limits::k_max_file_name_bytes, 'n'), "x");
    const std::vector<std::pair<fs::path, std::string>> cases{{temp / "newline", "control characters"},
                                                              {temp / "utf8/bad\xff.txt", "UTF-8"},
                                                              {temp / "long", "at most 255 bytes"}};
    for (const auto& [path, rule] : cases) {
        INFO(path);
        const auto files = collect_input_files({path});
        REQUIRE_FALSE(files.has_value());
        CHECK(files.error().code == "input_files_invalid");
        CHECK(contains(files.error().message, rule));
    }
    CHECK(collect_input_files({temp / "long" / std::string(pybox::limits::k_max_file_name_bytes, 'n')}).has_value());
}

TEST_CASE("64 input files are sent; a 65th is refused before any file is read", "[files]")
{
    TempFolder temp;
    for (std::size_t i = 0; i < pybox::limits::k_max_input_files; ++i)
        write_file(temp / "data" / ("f" + std::to_string(100 + i)), "x");
    const auto all = collect_input_files({temp / "data"});
    REQUIRE(all.has_value());
    CHECK(all->size() == pybox::limits::k_max_input_files);

    // The 65th is a sparse 1 GiB file: were any file read before counting, the size would fail first.
    write_file(temp / "big", "");
    fs::resize_file(temp / "big", std::uintmax_t{1} << 30);
    const auto files = collect_input_files({temp / "data", temp / "big"});
    REQUIRE_FALSE(files.has_value());
    CHECK(files.error().code == "input_files_invalid");
    CHECK(contains(files.error().message, "At most 64 input files"));
    CHECK(contains(files.error().message, (temp / "big").string()));
}

TEST_CASE("Input files of 8 MiB in all are sent; one byte more is refused, naming the cap", "[files]")
{
    TempFolder temp;
    const std::size_t half = pybox::limits::k_max_input_bytes / 2;
    write_file(temp / "one", std::string(half, 'a'));
    write_file(temp / "two", std::string(half, 'b'));
    write_file(temp / "three", std::string(half + 1, 'c'));
    const auto exact = collect_input_files({temp / "one", temp / "two"});
    REQUIRE(exact.has_value());
    CHECK((*exact)[0].bytes.size() + (*exact)[1].bytes.size() == pybox::limits::k_max_input_bytes);

    const auto over = collect_input_files({temp / "one", temp / "three"});
    REQUIRE_FALSE(over.has_value());
    CHECK(over.error().code == "input_files_invalid");
    CHECK(contains(over.error().message, "8388608 bytes"));
    CHECK(contains(over.error().message, (temp / "three").string()));
}

TEST_CASE("A 1 GiB input file is refused after reading at most the cap of it", "[files]")
{
    TempFolder temp;
    write_file(temp / "huge", "");
    fs::resize_file(temp / "huge", std::uintmax_t{1} << 30);
    const auto files = collect_input_files({temp / "huge"});
    REQUIRE_FALSE(files.has_value());
    CHECK(files.error().code == "input_files_invalid");
    CHECK(contains(files.error().message, "8388608 bytes"));
}

TEST_CASE("Only \"out\" and names inside it are in the output folder", "[files]")
{
    using pybox::proto::is_in_output_folder;
    CHECK(is_in_output_folder("out"));
    CHECK(is_in_output_folder("out/x.png"));
    CHECK_FALSE(is_in_output_folder("outside"));
    CHECK_FALSE(is_in_output_folder("output/x"));
    CHECK_FALSE(is_in_output_folder("data/out"));
    CHECK_FALSE(is_in_output_folder(""));
}

// ---- check_output_folder ----------------------------------------------------------------------

TEST_CASE("A writable output folder passes the check, which leaves nothing in it", "[files]")
{
    TempFolder temp;
    REQUIRE(check_output_folder(temp.path()).has_value());
    CHECK(tree(temp.path()).empty());
}

TEST_CASE("A symbolic link to a folder is a valid output folder", "[files]")
{
    TempFolder temp;
    fs::create_directories(temp / "real");
    fs::create_directory_symlink(temp / "real", temp / "link");
    CHECK(check_output_folder(temp / "link").has_value());
}

TEST_CASE("A missing output folder is refused, naming it", "[files]")
{
    TempFolder temp;
    const auto checked = check_output_folder(temp / "missing");
    REQUIRE_FALSE(checked.has_value());
    CHECK(checked.error().code == "output_folder_invalid");
    CHECK(contains(checked.error().message, (temp / "missing").string()));
    CHECK(contains(checked.error().message, "does not exist"));
}

TEST_CASE("An output folder that is a file is refused", "[files]")
{
    TempFolder temp;
    write_file(temp / "file", "x");
    const auto checked = check_output_folder(temp / "file");
    REQUIRE_FALSE(checked.has_value());
    CHECK(checked.error().code == "output_folder_invalid");
    CHECK(contains(checked.error().message, (temp / "file").string()));
    CHECK(contains(checked.error().message, "not a folder"));
}

TEST_CASE("An output folder no file can be created in is refused, even for root", "[files]")
{
    // Permission bits do not stop root; /proc refuses new files to everyone. Only a check that
    // really creates a file can tell.
    const auto checked = check_output_folder("/proc");
    REQUIRE_FALSE(checked.has_value());
    CHECK(checked.error().code == "output_folder_invalid");
    CHECK(contains(checked.error().message, "/proc"));
}

// ---- write_output_files -----------------------------------------------------------------------

TEST_CASE("Outputs are written with their folders, exact bytes and mode 0644 less the umask", "[files]")
{
    TempFolder temp;
    const std::string bytes("\x89PNG\0\xff", 6);
    const auto report = write_output_files(temp.path(), {{"plot.png", bytes}, {"tables/2026/a.csv", "x,y\n"}, {"empty", ""}},
                                           false);
    CHECK(report.files == std::vector<OutputFileResult>{{"plot.png", Outcome::written, 6, ""},
                                                        {"tables/2026/a.csv", Outcome::written, 4, ""},
                                                        {"empty", Outcome::written, 0, ""}});
    CHECK_FALSE(report.any_failed());
    CHECK(read_file(temp / "plot.png") == bytes);
    CHECK(read_file(temp / "tables/2026/a.csv") == "x,y\n");
    CHECK(tree(temp.path()) == std::vector<std::string>{"empty", "plot.png", "tables", "tables/2026", "tables/2026/a.csv"});
    struct stat status {};
    REQUIRE(::stat((temp / "plot.png").c_str(), &status) == 0);
    CHECK((status.st_mode & 07777) == (0644 & ~current_umask()));
}

TEST_CASE("An existing file is kept without --force and replaced with it", "[files]")
{
    TempFolder temp;
    write_file(temp / "sub/result.txt", "old");
    const auto kept = write_output_files(temp.path(), {{"sub/result.txt", "new"}}, false);
    CHECK(kept.files == std::vector<OutputFileResult>{{"sub/result.txt", Outcome::kept_existing, 0, ""}});
    CHECK_FALSE(kept.any_failed());
    CHECK(read_file(temp / "sub/result.txt") == "old");

    const auto replaced = write_output_files(temp.path(), {{"sub/result.txt", "new"}}, true);
    CHECK(replaced.files == std::vector<OutputFileResult>{{"sub/result.txt", Outcome::written, 3, ""}});
    CHECK(read_file(temp / "sub/result.txt") == "new");
    CHECK_FALSE(holds_temporary_file(temp.path()));
}

TEST_CASE("A folder or a link at an output's name is never replaced or followed, even with --force", "[files]")
{
    TempFolder temp;
    fs::create_directories(temp / "dir/x.txt");
    write_file(temp / "outside/target.txt", "target");
    fs::create_symlink(temp / "outside/target.txt", temp / "dir/link.txt");
    for (const bool force : {false, true}) {
        const auto report = write_output_files(temp / "dir", {{"x.txt", "new"}, {"link.txt", "new"}}, force);
        REQUIRE(report.files.size() == 2);
        CHECK(report.files[0].outcome == Outcome::failed);
        CHECK(contains(report.files[0].reason, "folder"));
        CHECK(report.files[1].outcome == Outcome::failed);
        CHECK(contains(report.files[1].reason, "symbolic link"));
        CHECK(report.any_failed());
    }
    CHECK(fs::is_directory(temp / "dir/x.txt"));
    CHECK(fs::is_symlink(temp / "dir/link.txt"));
    CHECK(read_file(temp / "outside/target.txt") == "target");
    CHECK_FALSE(holds_temporary_file(temp.path()));
}

TEST_CASE("A link to outside as a folder inside DIR is not followed: nothing lands outside", "[files]")
{
    TempFolder temp;
    fs::create_directories(temp / "dir");
    fs::create_directories(temp / "outside");
    fs::create_directory_symlink(temp / "outside", temp / "dir/sub");
    const auto report = write_output_files(temp / "dir", {{"sub/escape.txt", "x"}, {"sub/deeper/escape.txt", "x"}}, true);
    REQUIRE(report.files.size() == 2);
    for (const OutputFileResult& file : report.files) {
        CHECK(file.outcome == Outcome::failed);
        CHECK(contains(file.reason, "symbolic link"));
    }
    CHECK(tree(temp / "outside").empty());
    CHECK(tree(temp / "dir") == std::vector<std::string>{"sub"});
}

TEST_CASE("Output names from a hostile box that break the rules are reported, never written", "[files]")
{
    TempFolder temp;
    fs::create_directories(temp / "dir");
    const std::vector<FileContent> hostile{{"..", "x"},
                                           {"../escape.txt", "x"},
                                           {"a/../../escape.txt", "x"},
                                           {"/tmp/escape.txt", "x"},
                                           {std::string("nul\0.txt", 8), "x"},
                                           {"new\nline.txt", "x"},
                                           {std::string(pybox::limits::k_max_file_name_bytes + 1, 'n'), "x"},
                                           {"a//b", "x"},
                                           {"trailing/", "x"},
                                           {"", "x"},
                                           {".", "x"},
                                           {"bad\xff.txt", "x"}};
    const auto report = write_output_files(temp / "dir", hostile, true);
    REQUIRE(report.files.size() == hostile.size());
    for (std::size_t i = 0; i < hostile.size(); ++i) {
        INFO(i);
        CHECK(report.files[i].name == hostile[i].name);
        CHECK(report.files[i].outcome == Outcome::failed);
        CHECK(report.files[i].reason == pybox::proto::file_name_problem(hostile[i].name));
    }
    CHECK(tree(temp.path()) == std::vector<std::string>{"dir"});
    CHECK_FALSE(fs::exists("/tmp/escape.txt"));
}

TEST_CASE("An output beside an output folder of the same name fails alone", "[files]")
{
    TempFolder temp;
    const auto report = write_output_files(temp.path(), {{"a", "file"}, {"a/b", "inside"}, {"c", "c"}}, false);
    REQUIRE(report.files.size() == 3);
    CHECK(report.files[0].outcome == Outcome::written);
    CHECK(report.files[1].outcome == Outcome::failed);
    CHECK(contains(report.files[1].reason, "not a folder"));
    CHECK(report.files[2].outcome == Outcome::written);
    CHECK(read_file(temp / "a") == "file");
    CHECK_FALSE(holds_temporary_file(temp.path()));
}

TEST_CASE("Every output fails, with the reason, when DIR is gone by the time they come", "[files]")
{
    TempFolder temp;
    const auto report = write_output_files(temp / "gone", {{"a", "x"}, {"b", "y"}}, false);
    REQUIRE(report.files.size() == 2);
    for (const OutputFileResult& file : report.files) {
        CHECK(file.outcome == Outcome::failed);
        CHECK(contains(file.reason, (temp / "gone").string()));
    }
    CHECK_FALSE(fs::exists(temp / "gone"));
}

// ---- render_output_report ---------------------------------------------------------------------

TEST_CASE("The report is one line per output, with untrusted text made printable", "[files]")
{
    OutputWriteReport report;
    report.files = {{"plot.png", Outcome::written, 12'345, ""},
                    {"one.txt", Outcome::written, 1, ""},
                    {"x.csv", Outcome::kept_existing, 0, ""},
                    {"bad\x1b[2J", Outcome::failed, 0, "A reason\n\x1b]0;title"}};
    CHECK(render_output_report("out", report) ==
          "pybox: wrote out/plot.png (12345 bytes)\n"
          "pybox: wrote out/one.txt (1 byte)\n"
          "pybox: kept existing out/x.csv: use --force to replace it\n"
          "pybox: could not write out/bad\\x1b[2J: A reason\\x0a\\x1b]0;title\n");
    CHECK(render_output_report("results/", {{{"a", Outcome::written, 2, ""}}}) == "pybox: wrote results/a (2 bytes)\n");
    CHECK(render_output_report("out", {}).empty());
}
