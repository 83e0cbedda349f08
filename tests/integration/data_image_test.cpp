// The data image (images/data): numpy, pandas and matplotlib from Debian 12, built by the
// fixture's `pybox setup --with data`, run under the seed's data limits.
#include "tests/integration/harness.hpp"

#include <boost/json.hpp>

#include <catch2/catch.hpp>

using namespace pybox;
using namespace pybox::test;
namespace json = boost::json;

namespace {

// Renders a pandas plot with matplotlib's Agg backend into memory and prints the PNG's
// signature, the width and height from its IHDR chunk, and a pandas sum.
const std::string k_plot_program = R"(import io, struct
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
frame = pd.DataFrame({"x": np.arange(10), "y": np.arange(10) ** 2})
figure, axes = plt.subplots(figsize=(4, 3), dpi=100)
frame.plot(x="x", y="y", ax=axes)
buffer = io.BytesIO()
figure.savefig(buffer, format="png")
png = buffer.getvalue()
assert png[12:16] == b"IHDR"
width, height = struct.unpack(">II", png[16:24])
print(png[:8].hex(), width, height, len(png) > 1000)
print(int(frame["y"].sum()))
)";

}  // namespace

TEST_CASE("A pandas + matplotlib program in the data image renders a real PNG in memory")
{
    const auto run = run_json(k_plot_program, {"--image", "data", "--timeout", "30"});
    const auto& receipt = run.receipt;
    INFO(json::serialize(receipt.at("capture")));
    CHECK(run.process.exit_code == 0);
    CHECK(receipt.at("capture").at("stdout") == "89504e470d0a1a0a 400 300 True\n285\n");
    CHECK(receipt.at("identity").at("image") == "data");
}

TEST_CASE("Data boxes get the data limits, verified before start")
{
    const auto run = run_json("import numpy, pandas\nprint(numpy.__version__, pandas.__version__)\n",
                              {"--image", "data", "--timeout", "30"});
    const auto& receipt = run.receipt;
    CHECK(run.process.exit_code == 0);
    CHECK(receipt.at("capture").at("stdout").as_string().starts_with("1."));
    CHECK(receipt.at("configured").at("memory_bytes") == 512 * 1024 * 1024);
    CHECK(receipt.at("configured").at("memory_swap_bytes") == 512 * 1024 * 1024);
    CHECK(receipt.at("configured").at("pids") == 64);
    CHECK(receipt.at("configured").at("nano_cpus") == 1'000'000'000);
    CHECK(receipt.at("observed").at("policy_verified_before_start") == true);
    CHECK(receipt.at("observed").at("effective_policy").at("mismatches").as_array().empty());
}

TEST_CASE("setup --with data is up to date once built")
{
    const auto run = run_pybox({"setup", "--with", "data"});
    CHECK(run.exit_code == 0);
    CHECK(run.output.find("stdlib: up to date") != std::string::npos);
    CHECK(run.output.find("data: up to date") != std::string::npos);
}
