// Helpers shared by the hostile cases (docs/hostile.md): reading what a receipt says about the
// program, on top of the integration harness. Test-thread only; failures fail the test.
#pragma once

#include "tests/hostile/raw_client.hpp"
#include "tests/integration/harness.hpp"

#include <boost/json/value.hpp>

#include <set>
#include <string>

namespace pybox::test {

// The errno values a probe in the box reports for a refused call (Linux's EPERM and ENOSYS).
inline constexpr int k_eperm = 1;
inline constexpr int k_enosys = 38;

// observed.termination.mechanism.
std::string mechanism(const boost::json::value& receipt);

// Duration of the lifecycle's `run` phase in seconds (the part the deadline limits).
double run_phase_s(const boost::json::value& receipt);

// The mechanisms that mean "stopped by PyBox at the deadline".
bool stopped_at_deadline(const boost::json::value& receipt);

// The daemon's socket ($PYBOX_HOME/pyboxd.sock).
std::filesystem::path daemon_socket();

// The bytes of a POST /v1/runs request carrying `body`, and of a GET /v1/ping that closes.
std::string post_runs(const std::string& body, const std::string& connection = "close");
inline const std::string k_ping = "GET /v1/ping HTTP/1.1\r\nHost: pybox\r\nConnection: close\r\n\r\n";

// The error code of an error answer's body (fails the test if the body is not the documented shape).
std::string error_code(const HttpAnswer& answer);

// A fresh connection to `socket` gets its ping answered.
void check_ping_answers(const std::filesystem::path& socket = daemon_socket());

// The files <home>/attempts holds, besides the notes of the boxes its daemon keeps warm.
std::set<std::string> attempt_files(const std::filesystem::path& home = runtime_home());
// Those of attempt_files() that were not in `before`: the notes a test's own runs left. Notes
// of earlier runs may go meanwhile (the sweep settles them), so counts are not compared.
std::set<std::string> new_attempt_files(const std::set<std::string>& before);

}  // namespace pybox::test
