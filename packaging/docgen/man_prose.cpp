#include "packaging/docgen/man_prose.hpp"

#include "client/commands.hpp"
#include "common/version.hpp"

namespace pybox::docgen {

namespace {

// EXIT STATUS describes both under one code.
static_assert(client::k_exit_receipt_not_verified == client::k_exit_not_verified);

const ManSection k_environment{
    "ENVIRONMENT",
    ".TP\n.B PYBOX_HOME\n"
    "The runtime folder (an absolute path) instead of \\fI~/.pybox/runtime\\fR.\n"
    ".TP\n.B HOME\n"
    "Where \\fI~/.pybox/runtime\\fR is, when \\fBPYBOX_HOME\\fR is not set.\n"};

const ManSection k_files{
    "FILES",
    ".TP\n.I ~/.pybox/runtime/\n"
    "Everything PyBox owns (mode 0700; refused if another user owns it).\n"
    ".TP\n.I ~/.pybox/runtime/pyboxd.sock\n"
    "The daemon's socket: HTTP and JSON, for \\fBpybox\\fR and for scripts.\n"
    ".TP\n.I ~/.pybox/runtime/config.json\n"
    "Optional settings of the daemon, written by you.\n"
    ".TP\n.I ~/.pybox/runtime/images.json\n"
    "The images built by \\fBpybox setup\\fR and \\fBpybox image build\\fR.\n"
    ".TP\n.I ~/.pybox/runtime/attempts/\n"
    "A record of each run until its box is confirmed removed, and the journal of settled runs.\n"
    ".TP\n.I ~/.pybox/runtime/receipts/\n"
    "The receipts the daemon issued (the newest 1,000, at most 64 MiB), for \\fBpybox receipts\\fR.\n"
    ".TP\n.I ~/.pybox/runtime/signing_key.pem\n"
    "The installation's Ed25519 private key (0600), which signs every receipt.\n"
    ".TP\n.I ~/.pybox/runtime/signing_key.pub.pem\n"
    "Its public key: \\fBpybox key show\\fR prints it, \\fBpybox verify\\fR trusts it.\n"
    ".TP\n.I ~/.pybox/runtime/engine/docker.sock\n"
    "The private container engine's socket.\n"};

}  // namespace

ManPage client_man_prose()
{
    ManPage page;
    page.section = 1;
    page.version = "pybox " + pybox::version();
    page.manual = "User Commands";
    page.summary = "run Python programs in fresh, sealed containers and get a receipt";
    page.before_commands.push_back(
        {"DESCRIPTION",
         ".B pybox\n"
         "sends a Python program to \\fBpyboxd\\fR(8), which runs it in a fresh, locked\\-down container "
         "(no network, read\\-only root, a memory, CPU and process limit, a deadline), removes the "
         "container and answers with what the program printed and a receipt: what PyBox asked for, "
         "what the engine and the kernel observed, and what it cannot be sure of.\n"
         ".PP\n"
         "Start the engine once with \\fBpybox vm start\\fR and build the image with \\fBpybox setup\\fR; "
         "then \\fBpybox exec\\fR \\fIprogram.py\\fR runs a program.\n"});
    page.after_commands.push_back(k_environment);
    page.after_commands.push_back(k_files);
    page.after_commands.push_back(
        {"EXIT STATUS",
         "\\fBpybox exec\\fR exits with the program's own exit code or one of the codes listed under it above.\n"
         ".TP\n.B 0\nThe command did what it was asked.\n"
         ".TP\n.B " + std::to_string(client::k_exit_not_verified) +
             "\n\\fBpybox vm status\\fR: the engine is not running or not verified. \\fBpybox verify\\fR: the receipt "
             "does not verify (not JSON, not signed, another key, or changed).\n"
             ".TP\n.B " + std::to_string(client::k_exit_pybox_failed) +
             "\nPyBox failed (a bad option, the daemon not running, busy or unreachable, an engine or image "
             "check failed); the reason is printed as \\(lqpybox: ...\\(rq on standard error.\n"});
    page.after_commands.push_back(
        {"SEE ALSO",
         "\\fBpyboxd\\fR(8), \\fBdocker\\fR(1); the reference, receipt guide and socket API in "
         "\\fI/usr/share/doc/pybox/\\fR (docs/ of the source).\n"});
    return page;
}

ManPage daemon_man_prose()
{
    ManPage page;
    page.section = 8;
    page.version = "pybox " + pybox::version();
    page.manual = "System Manager's Manual";
    page.summary = "the PyBox daemon: runs programs in sealed containers for pybox";
    page.before_commands.push_back(
        {"DESCRIPTION",
         ".B pyboxd\n"
         "holds the private container engine, the image registry and the lifecycle lock of one runtime "
         "folder, serves \\fBpybox\\fR(1) and scripts on its socket, runs each program in a fresh sealed "
         "box, and sweeps boxes whose runs it could not confirm. One daemon per runtime folder; it runs "
         "in the foreground (as a systemd user service, or by hand).\n"});
    page.after_commands.push_back(k_environment);
    page.after_commands.push_back(k_files);
    page.after_commands.push_back({"EXIT STATUS",
                                   ".TP\n.B 0\nStopped by SIGTERM or SIGINT after a clean shutdown.\n"
                                   ".TP\n.B 1\nCould not start (another pyboxd holds the runtime folder, a bad "
                                   "config.json, an unusable runtime folder); the reason is printed on "
                                   "standard error.\n"
                                   ".PP\nA bad option exits with CLI11's non\\-zero code and its message.\n"});
    page.after_commands.push_back({"SEE ALSO", "\\fBpybox\\fR(1), \\fBdockerd\\fR(8)\n"});
    return page;
}

}  // namespace pybox::docgen
