// Helpers shared by the hostile cases (HOSTILE.md): reading what a receipt says about the
// program, on top of the integration harness. Test-thread only; failures fail the test.
#pragma once

#include "tests/integration/harness.hpp"

#include <boost/json/value.hpp>

#include <string>

namespace pybox::test {

// The exact bytes the program wrote to "stdout" or "stderr", decoded from the receipt.
std::string captured(const boost::json::value& receipt, const std::string& stream);

// The program's stdout parsed as one JSON document (hostile probes print their findings so).
boost::json::value program_json(const JsonRun& run);

// observed.termination.mechanism.
std::string mechanism(const boost::json::value& receipt);

// Duration of the lifecycle's `run` phase in seconds (the part the deadline limits).
double run_phase_s(const boost::json::value& receipt);

// The mechanisms that mean "stopped by PyBox at the deadline".
bool stopped_at_deadline(const boost::json::value& receipt);

// The daemon's socket ($PYBOX_HOME/pyboxd.sock).
std::filesystem::path daemon_socket();

}  // namespace pybox::test
