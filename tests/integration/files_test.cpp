// Runs that move files (`pybox exec --in PATH --out DIR`), against the real engine: the inputs
// appear in the box's working folder, what the program leaves in out/ comes back into DIR
// only, the receipt lists both with SHA-256, nothing the program prints can pass for a file
// or for the helper's report, and hostile inputs and outputs are refused, or skipped and
// reported (docs/hostile.md cases 26-29).
#include "common/sha256.hpp"
#include "tests/integration/harness.hpp"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>

using namespace pybox;
using namespace pybox::test;
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

// A fresh folder with `in/` (inputs) and `out/` (the output folder), removed afterwards.
struct Workspace {
    fs::path root;
    Workspace()
    {
        char pattern[] = "/tmp/pybox-files-XXXXXX";
        root = ::mkdtemp(pattern);
        fs::create_directories(root / "in" / "sub");
        fs::create_directories(root / "out");
    }
    ~Workspace() { fs::remove_all(root); }
    fs::path in() const { return root / "in"; }
    fs::path out() const { return root / "out"; }
    void write(const fs::path& file, const std::string& bytes) const { std::ofstream(file, std::ios::binary) << bytes; }
    std::string read(const fs::path& file) const
    {
        std::ifstream stream(file, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(stream), {});
    }
    std::set<std::string> files_under(const fs::path& dir) const
    {
        std::set<std::string> names;
        for (const auto& entry : fs::recursive_directory_iterator(dir))
            names.insert(fs::relative(entry.path(), dir).string() + (entry.is_directory() ? "/" : ""));
        return names;
    }
};

const json::object& files_of(const JsonRun& run) { return run.receipt.at("files").as_object(); }

std::set<std::string> names_in(const json::value& list)
{
    std::set<std::string> names;
    for (const auto& item : list.as_array()) names.insert(std::string(item.at("name").as_string()));
    return names;
}

}  // namespace

TEST_CASE("Inputs appear in the working folder and outputs come back into the output folder", "[files]")
{
    Workspace space;
    space.write(space.in() / "sub" / "data.csv", "a,b\n1,2\n");
    space.write(space.root / "notes.txt", "notes\n");
    const auto run = run_json(R"(import os
print(os.getcwd(), sorted(os.listdir(".")), open("in/sub/data.csv").read().split()[1])
open("out/result.txt", "w").write("3\n")
os.makedirs("out/plots")
open("out/plots/p.bin", "wb").write(bytes(range(256)))
)",
                              {"--in", space.in().string(), "--in", (space.root / "notes.txt").string(), "--out",
                               space.out().string()});
    CHECK(run.process.exit_code == 0);
    CHECK(std::string(run.receipt.at("capture").at("stdout").as_string()) == "/tmp/work ['in', 'notes.txt', 'out'] 1,2\n");
    const auto& files = files_of(run);
    CHECK(names_in(files.at("inputs")) == std::set<std::string>{"in/sub/data.csv", "notes.txt"});
    CHECK(names_in(files.at("outputs")) == std::set<std::string>{"result.txt", "plots/p.bin"});
    CHECK(files.at("errors").as_array().empty());
    CHECK(space.read(space.out() / "result.txt") == "3\n");
    std::string all_bytes;
    for (int i = 0; i < 256; ++i) all_bytes.push_back(static_cast<char>(i));
    CHECK(space.read(space.out() / "plots" / "p.bin") == all_bytes);
    for (const auto& output : files.at("outputs").as_array())
        CHECK(output.at("sha256") == sha256_hex(space.read(space.out() / std::string(output.at("name").as_string()))).c_str());
    CHECK(space.files_under(space.out()) == std::set<std::string>{"result.txt", "plots/", "plots/p.bin"});
    const auto& configured = run.receipt.at("configured");
    CHECK(configured.at("tmpfs").at("bytes") == 64 * 1024 * 1024);
    CHECK(configured.at("files_helper_sha256").as_string().size() == 64);
    CHECK(configured.at("command").at(8) == "-c");
    CHECK(configured.at("readonly_root") == true);
    CHECK(run.receipt.at("observed").at("effective_policy").at("HostConfig").at("Binds").as_array().empty());
}

TEST_CASE("Nothing the program prints passes for a returned file or for the helper's report", "[files]")
{
    Workspace space;
    const auto run = run_json(R"(import json, sys
fake = {"inputs": [], "outputs": [{"name": "evil.txt", "bytes": 1, "sha256": "0" * 64, "base64": "eA=="}],
        "skipped": [], "skipped_unlisted": 0, "errors": [], "exit": 0}
for marker in ["\n<pybox-files-report 00000000000000000000000000000000>\n", "<pybox-files-report"]:
    sys.stdout.write(marker + json.dumps(fake))
print()
)",
                              {"--out", space.out().string()});
    CHECK(run.process.exit_code == 0);
    CHECK(std::string(run.receipt.at("capture").at("stdout").as_string()).find("evil.txt") != std::string::npos);
    CHECK(files_of(run).at("outputs").as_array().empty());
    CHECK(files_of(run).at("errors").as_array().empty());
    CHECK(space.files_under(space.out()).empty());
}

TEST_CASE("Hostile outputs are skipped or cut at the caps and reported, and nothing outside the folder is touched",
          "[files][hostile]")
{
    Workspace space;
    const auto run = run_json(R"(import os
os.chdir("out")
os.symlink("/etc/passwd", "passwd")
os.symlink("../../x", "escape")
os.mkfifo("fifo")
open("linked", "w").write("x")
os.link("linked", "linked2")
open("big", "wb").write(b"b" * (16 << 20))
with open("sparse", "wb") as f:
    f.truncate(1 << 40)
open("new\nline", "w").write("n")
open("secret", "w").write("s")
os.chmod("secret", 0)
os.makedirs("zz_many")
for i in range(10000):
    open("zz_many/%05d" % i, "w").close()
print("done")
)",
                              {"--out", space.out().string(), "--timeout", "30"});
    CHECK(run.process.exit_code == 0);
    const auto& files = files_of(run);
    CHECK(files.at("outputs").as_array().size() == 64);
    std::map<std::string, std::string> reasons;
    for (const auto& item : files.at("skipped").as_array())
        reasons[std::string(item.at("name").as_string())] = std::string(item.at("reason").as_string());
    CHECK(reasons["passwd"] == "symlink");
    CHECK(reasons["escape"] == "symlink");
    CHECK(reasons["fifo"] == "not_regular_file");
    CHECK(reasons["linked"] == "hard_link");
    CHECK(reasons["big"] == "over_total_bytes");
    CHECK(reasons["sparse"] == "over_total_bytes");
    CHECK(reasons["new\\x0aline"] == "name_not_allowed");
    CHECK(reasons["secret"] == "unreadable");
    CHECK(files.at("skipped").as_array().size() == 64);
    CHECK(files.at("skipped_unlisted").as_int64() > 0);
    // 64 of the 10,000 empty files came back (zz_many/ is walked last, so the entries above are
    // listed before its skipped ones); nothing else was written, nowhere else.
    const auto written = space.files_under(space.out());
    CHECK(written.size() == 65);  // zz_many/ and 64 files in it
    CHECK_FALSE(fs::exists(space.root / "x"));
    CHECK_FALSE(fs::exists(space.out() / "passwd"));
}

TEST_CASE("Bad inputs create nothing and say why", "[files]")
{
    Workspace space;
    const auto refused = [&](const std::vector<std::string>& args, const std::string& says) {
        std::vector<std::string> all{"exec", "-", "--out", space.out().string()};
        all.insert(all.end(), args.begin(), args.end());
        const auto result = run_pybox(all, "print(1)\n");
        CHECK(result.exit_code == 125);
        INFO(result.error_output);
        CHECK(result.error_output.find(says) != std::string::npos);
    };
    refused({"--in", (space.root / "missing").string()}, "does not exist");
    for (int i = 0; i < 65; ++i) space.write(space.in() / ("f" + std::to_string(i)), "x");
    refused({"--in", space.in().string()}, "At most 64 input files");
    fs::remove_all(space.in());
    fs::create_directories(space.in());
    space.write(space.in() / "big", std::string(8 * 1024 * 1024 + 1, 'x'));
    refused({"--in", space.in().string()}, "more than 8388608 bytes");
    fs::remove(space.in() / "big");
    space.write(space.root / "a", "1");
    fs::create_directories(space.root / "other");
    space.write(space.root / "other" / "a", "2");
    refused({"--in", (space.root / "a").string(), "--in", (space.root / "other" / "a").string()}, "appears twice");
    fs::create_symlink("/etc/passwd", space.in() / "link");
    refused({"--in", space.in().string()}, "symbolic link");
    const auto no_folder = run_pybox({"exec", "-", "--out", (space.root / "nowhere").string()}, "print(1)\n");
    CHECK(no_folder.exit_code == 125);
    CHECK(space.files_under(space.out()).empty());
    CHECK(labelled_boxes().empty());
}

TEST_CASE("An existing output file is kept unless --force", "[files]")
{
    Workspace space;
    space.write(space.out() / "r.txt", "old\n");
    const std::string program = "open('out/r.txt', 'w').write('new\\n')\n";
    const auto kept = run_pybox({"exec", "-", "--out", space.out().string()}, program);
    CHECK(kept.exit_code == 125);
    CHECK(kept.error_output.find("kept existing") != std::string::npos);
    CHECK(space.read(space.out() / "r.txt") == "old\n");
    const auto forced = run_pybox({"exec", "-", "--out", space.out().string(), "--force"}, program);
    CHECK(forced.exit_code == 0);
    CHECK(space.read(space.out() / "r.txt") == "new\n");
    CHECK(space.files_under(space.out()) == std::set<std::string>{"r.txt"});  // no temporary file left
}

TEST_CASE("A files run stopped at the deadline returns no file and says why", "[files]")
{
    Workspace space;
    const auto run = run_json("open('out/partial.txt', 'w').write('x')\nwhile True: pass\n",
                              {"--out", space.out().string(), "--timeout", "1"});
    CHECK(run.process.exit_code == 124);
    const auto& errors = files_of(run).at("errors").as_array();
    REQUIRE(errors.size() == 1);
    CHECK(std::string(errors[0].as_string()).find("deadline") != std::string::npos);
    CHECK(space.files_under(space.out()).empty());
    CHECK(run.receipt.at("cleanup").at("removed") == true);
}

TEST_CASE("A pandas + matplotlib program in the data image returns a real plot.png", "[files][data]")
{
    Workspace space;
    const auto run = run_json(R"(import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import pandas as pd
frame = pd.DataFrame({"x": range(10), "y": [v * v for v in range(10)]})
figure, axes = plt.subplots(figsize=(4, 3), dpi=100)
frame.plot(x="x", y="y", ax=axes)
figure.savefig("out/plot.png")
)",
                              {"--image", "data", "--timeout", "30", "--out", space.out().string()});
    CHECK(run.process.exit_code == 0);
    const std::string png = space.read(space.out() / "plot.png");
    REQUIRE(png.size() > 24);
    CHECK(png.substr(0, 8) == "\x89PNG\r\n\x1a\n");
    CHECK(png.substr(12, 4) == "IHDR");
    const auto be32 = [&](std::size_t at) {
        return (static_cast<unsigned>(static_cast<unsigned char>(png[at])) << 24) |
               (static_cast<unsigned>(static_cast<unsigned char>(png[at + 1])) << 16) |
               (static_cast<unsigned>(static_cast<unsigned char>(png[at + 2])) << 8) |
               static_cast<unsigned>(static_cast<unsigned char>(png[at + 3]));
    };
    CHECK(be32(16) == 400);
    CHECK(be32(20) == 300);
}
