#include "proto/box_policy.hpp"

#include "common/limits.hpp"
#include "proto/seccomp_profile.hpp"
#include "util/text.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace pybox::proto {

namespace {

constexpr std::int64_t k_mib = 1024 * 1024;

}  // namespace

std::string tmpfs_flags(const BoxPolicy& policy)
{
    std::string flags;
    for (const auto& [set, name] : {std::pair{policy.tmpfs_noexec, "noexec"}, std::pair{policy.tmpfs_nodev, "nodev"},
                                    std::pair{policy.tmpfs_nosuid, "nosuid"}})
        if (set) flags += (flags.empty() ? "" : ",") + std::string(name);
    return flags;
}

std::optional<BoxPolicy> policy_for_image(const std::string& image)
{
    BoxPolicy policy;
    policy.seccomp = k_seccomp_profile_name;
    policy.seccomp_sha256 = seccomp_profile_sha256();
    if (image == "stdlib" || is_own_image_name(image)) {
        policy.memory_bytes = 128 * k_mib;
        policy.pids = 32;
        policy.cpu_millis = 500;
        return policy;
    }
    if (image == "data") {
        policy.memory_bytes = 512 * k_mib;
        policy.pids = 64;
        policy.cpu_millis = 1000;
        return policy;
    }
    return std::nullopt;
}

std::vector<std::string> known_images()
{
    return {"stdlib", "data"};
}

bool is_own_image_name(std::string_view name)
{
    return own_image_name_problem(name).empty();
}

std::string own_image_name_problem(std::string_view name)
{
    const bool charset = !name.empty() && name.size() <= k_max_own_image_name_bytes && name.front() >= 'a' &&
                         name.front() <= 'z' && std::all_of(name.begin(), name.end(), [](char c) {
                             return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
                         });
    if (!charset)
        return "An own image's name is 1 to " + std::to_string(k_max_own_image_name_bytes) +
               " characters: a lower-case letter, then lower-case letters, digits and '-' (got \"" +
               util::printable_excerpt(name) + "\").";
    const auto builtin = known_images();
    if (std::find(builtin.begin(), builtin.end(), name) != builtin.end())
        return "\"" + std::string(name) + "\" is a built-in image; choose another name for an own image.";
    return "";
}

namespace {

// The first lines of every box's Perl PID 1: it makes itself undumpable
// (prctl(PR_SET_DUMPABLE = 4, 0), by the call's number on the architectures PyBox's images are
// built for: x86_64 157, aarch64 167), so that a process of the box's uid without
// CAP_SYS_PTRACE can neither read nor write its memory (/proc/1/mem, process_vm_*), nor its
// fds, maps or environment. Its children start undumpable too and become dumpable again when
// they exec the interpreter. Anywhere else, or if the call fails, it says so on stderr and
// exits 1: no box runs with a timer the program could patch. The architecture is the kernel's
// (/proc/sys/kernel/arch, Linux 6.1 and later), else Perl's build settings (loading them costs
// a cold start about 5 ms more).
std::string undumpable_first_lines()
{
    return R"PL(my $arch;
if (open(my $k, '<', '/proc/sys/kernel/arch')) { $arch = <$k> } else { require Config; $arch = $Config::Config{archname} }
($arch) = $arch =~ /^([^-\s]+)/;
my $prctl = {x86_64 => 157, aarch64 => 167}->{$arch};
if (!$prctl || syscall($prctl, 4, 0, 0, 0, 0) != 0) {
  print STDERR "pybox: the box timer cannot make itself undumpable on $arch\n";
  exit 1;
}
)PL";
}

}  // namespace

std::vector<std::string> box_command(double timeout_s)
{
    // Perl as PID 1, undumpable first; then as the warm box's timer, without the pipe: forks the
    // command (its stdin the box's), waits for its pidfd at most the timer's seconds, and exits
    // with its status (128 + N for signal N), or kills it and exits 137 when the time is up.
    // EINTR is 4, WNOHANG 1.
    return {"perl", "-e",
            undumpable_first_lines() + R"PL(my $t = shift;
defined(my $py = fork) or exit 1;
if (!$py) { exec @ARGV; exit 127 }
my $fd = syscall(434, $py, 0);
if ($fd < 0) { kill 'KILL', $py; exit 1 }
my $left = $t;
while ($left > 0) {
  my $r = '';
  vec($r, $fd, 1) = 1;
  (my $n, $left) = select($r, undef, undef, $left);
  last if $n > 0;
  last if $n < 0 && $! != 4;
}
if (waitpid($py, 1) == $py) { exit(($? & 127) ? 128 + ($? & 127) : $? >> 8) }
kill 'KILL', $py;
exit 137;
)PL",
            util::format_number(timeout_s + limits::k_box_timer_margin_s), "python3", "-I", "-B", "-u", "-"};
}

std::vector<std::string> warm_box_command()
{
    // Perl (perl-base is Essential, in every image PyBox builds) as PID 1:
    // - forks the interpreter at once, `python3 -I -B -u -` with stdin a pipe, only fds 0-2 (perl's
    //   own fds are close-on-exec) and every signal at its default; it starts up and blocks
    //   reading its program;
    // - opens a pidfd of it (pidfd_open, 434 on every Linux architecture): readable when it ends;
    // - reads the timer line from stdin a byte at a time (a malformed or missing line: the
    //   interpreter is killed, exit 1, no program runs);
    // - from then on, for at most that many seconds, passes the rest of stdin into the pipe and
    //   waits for the pidfd; then exits with the interpreter's status (128 + N for signal N), or,
    //   when the time is up, kills it and exits 137, which ends every process of the box.
    // It sets no signal handler, so nothing inside the box can signal it (PID 1 of a PID
    // namespace gets only the signals it handles); SIGPIPE is ignored, set after the fork. Its
    // numbers are Linux's: F_SETFL 4, O_NONBLOCK 2048, EINTR 4, WNOHANG 1. Without a pidfd
    // (a kernel before 5.3) it exits 1 at once, so the box is not running when a run looks.
    return {"perl", "-e",
            undumpable_first_lines() + R"PL(pipe(my $pr, my $pw) or exit 1;
defined(my $py = fork) or exit 1;
if (!$py) { open(STDIN, '<&', $pr) or exit 1; exec 'python3', '-I', '-B', '-u', '-'; exit 127 }
close $pr;
$SIG{PIPE} = 'IGNORE';
my $fd = syscall(434, $py, 0);
my ($t, $c) = ('', '');
while ($fd >= 0 && sysread(STDIN, $c, 1)) { last if $c eq "\n"; $t .= $c }
if ($c ne "\n" || $t !~ /^[0-9]+(\.[0-9]+)?$/) { kill 'KILL', $py; exit 1 }
fcntl($pw, 4, 2048);
my ($left, $buf, $in) = ($t, '', 1);
while ($left > 0) {
  my ($r, $w) = ('', '');
  vec($r, $fd, 1) = 1;
  vec($r, 0, 1) = 1 if $in && !length $buf;
  vec($w, fileno($pw), 1) = 1 if length $buf;
  (my $n, $left) = select($r, $w, undef, $left);
  if ($n < 0) { last unless $! == 4; next }
  last if vec($r, $fd, 1);
  if ($in && vec($r, 0, 1) && !sysread(STDIN, $buf, 65536)) { close $pw; $in = 0 }
  if (length $buf && vec($w, fileno($pw), 1)) { my $k = syswrite($pw, $buf); substr($buf, 0, defined $k ? $k : length $buf) = '' }
}
if (waitpid($py, 1) == $py) { exit(($? & 127) ? 128 + ($? & 127) : $? >> 8) }
kill 'KILL', $py;
exit 137;
)PL"};
}

std::string warm_box_timer_line(double guest_timer_s) { return util::format_number(guest_timer_s) + "\n"; }

std::vector<std::string> fed_box_command(const std::vector<std::string>& inner, std::int64_t file_bytes,
                                         std::string_view termination_log)
{
    if (termination_log.find_first_of("'\\") != std::string_view::npos)
        throw std::invalid_argument("a fed box's termination log path cannot be quoted in Perl");
    // sh sets the limits the engine cannot, then execs perl with the feeder as its program
    // ($0) and `inner` as its arguments. The Perl program, after the undumpable lines: PID 1
    // or nothing; forks the feeder; execs `inner` on the pipe. The feeder reads the header
    // byte by byte, writes the environment report on stdout (all of it, or it exits before the
    // program has a byte) and closes stdout, copies exactly n bytes (never more: what follows is
    // not the program's), closes the pipe, and waits on stdin for the kill byte or its end. On
    // the kill byte it reads the nonce strictly (33 bytes at most, 1 s for each read), records
    // it, then kills.
    const BoxPolicy defaults;
    std::vector<std::string> command = {
        "sh", "-c",
        "ulimit -n " + std::to_string(defaults.open_files) + " && ulimit -c " +
            std::to_string(defaults.core_dump_bytes) + " && ulimit -f " + std::to_string((file_bytes + 511) / 512) +
            " && unset PWD && exec perl -e \"$0\" \"$@\"",
        undumpable_first_lines() + R"PL(if ($$ != 1) { print STDERR "pybox: the fed box command runs only as PID 1 of its box\n"; exit 1 }
pipe(my $pr, my $pw) or exit 1;
defined(my $feeder = fork) or exit 1;
if ($feeder) { open(STDIN, '<&', $pr) or exit 1; close $pr; close $pw; exec @ARGV; exit 127 }
close $pr;
close STDERR;
$SIG{PIPE} = 'IGNORE';
my ($n, $c) = ('', '');
while (sysread(STDIN, $c, 1)) {
  last if $c eq "\n";
  exit 1 if $c lt '0' || $c gt '9' || length($n .= $c) > 12;
}
exit 1 if $c ne "\n" || !length $n;
my $report = ')PL" + std::string(k_fed_environment_marker) + R"PL(';
$report .= ' ' . unpack('H*', $_) . '=' . unpack('H*', $ENV{$_}) for sort keys %ENV;
$report .= "\n";
while (length $report) {
  my $k = syswrite(STDOUT, $report);
  exit 1 unless $k;
  substr($report, 0, $k) = '';
}
close STDOUT;
my $buf;
while ($n > 0) {
  my $got = sysread(STDIN, $buf, $n < 65536 ? $n : 65536);
  last unless $got;
  $n -= $got;
  while ($pw && length $buf) {
    my $k = syswrite($pw, $buf);
    if (!defined $k) { close $pw; undef $pw; last }
    substr($buf, 0, $k) = '';
  }
}
close $pw if $pw;
while (sysread(STDIN, $buf, 65536)) {
  my $at = index($buf, ')PL" + std::string(1, k_fed_kill_byte) + R"PL(');
  next if $at < 0;
  my $nonce = substr($buf, $at + 1);
  while (length($nonce) < 33 && $nonce =~ /^[0-9a-f]*\z/) {
    my $r = '';
    vec($r, 0, 1) = 1;
    last unless select($r, undef, undef, 1) > 0 && sysread(STDIN, $nonce, 33 - length($nonce), length($nonce));
  }
  if ($nonce =~ /^([0-9a-f]{32})\n/ && open(my $log, '>', ')PL" + std::string(termination_log) + R"PL(')) {
    print $log "pybox-kill $1\n";
    close $log;
  }
  while (1) { kill 9, -1; select(undef, undef, undef, 0.05) }
}
exit 0;
)PL"};
    command.insert(command.end(), inner.begin(), inner.end());
    return command;
}

std::string fed_program_frame(std::string_view program)
{
    return std::to_string(program.size()) + "\n" + std::string(program);
}

std::string fed_kill_line(std::string_view nonce) { return k_fed_kill_byte + std::string(nonce) + "\n"; }

std::string fed_kill_record(std::string_view nonce) { return "pybox-kill " + std::string(nonce) + "\n"; }

}  // namespace pybox::proto
