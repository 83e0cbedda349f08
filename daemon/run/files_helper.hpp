// The files helper: the fixed first program of a box that moves files (files_helper.py, compiled
// in), what the daemon sends it, and how the box is started with it. Pure apart from the
// random marker.
//
// The helper's report follows a per-run marker on the box's stdout. The marker is random (128
// bits) and travels only on the box's stdin, which the helper reads whole before the program
// starts, so a program cannot print it: the daemon takes everything before it for the program's
// output and everything after it for the report (engine::StreamDemuxer's marker split).
#pragma once

#include "proto/run_request.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace pybox::daemon {

std::string_view files_helper_text();  // generated from files_helper.py
const std::string& files_helper_sha256();

// The cold box's command (proto::box_command: the box timer at deadline + 1) running
// `python3 -I -B -u -c <helper>`.
std::vector<std::string> files_box_command(double timeout_s);

// A fresh marker: a fixed prefix and 32 random hex digits.
std::string new_files_marker();

// The helper's stdin: {"marker", "source", "inputs": [{"name", "base64"}]} as one JSON text.
std::string files_helper_input(const proto::RunRequest& request, const std::string& marker);

}  // namespace pybox::daemon
