# pybox-watch: PyBox's kernel watcher, output format version 1.
#
# Samples one box's cgroup files while its program runs and prints what it read, one line per
# reading. The same fixed text runs locally or on a remote host (POSIX sh; dash is the
# reference). In the sampling path only shell builtins run, except one `sleep` per gap.
#
# Invocation (argv built by pybox::watcher::watch_command):
#   sh -c "$SCRIPT" pybox-watch VERSION ROOT BOX PARENT FAST_GAP_MS FAST_SAMPLES SLOW_GAP_MS
#                                MAX_SAMPLES MAX_RUN_CS FINAL_GAP_MS FINAL_POLLS
#   VERSION   cgroup version, 1 or 2
#   ROOT      cgroup mount root, e.g. /sys/fs/cgroup
#   BOX       the box's cgroup relative to a controller's root, e.g. /pybox-<i>/<run>/<id>
#   PARENT    the run parent cgroup PyBox owns, e.g. /pybox-<i>/<run>
#   Samples 1..FAST_SAMPLES are FAST_GAP_MS apart, the rest SLOW_GAP_MS apart, MAX_SAMPLES in
#   all (the first at once). Without SIGUSR1 it stops by itself MAX_RUN_CS after it started.
#
# Signals: SIGUSR1 (the engine reported the exit) starts the final phase: poll the run parent's
# pids.current every FINAL_GAP_MS, at most FINAL_POLLS times, until it is 0 (no task left, every
# counter frozen); then read the box's cgroup and the run parent once more and end. SIGUSR2
# (the box's first process has ended, seen on the host: the kernel ends every other process of
# the box's pid namespace with it, so only that process's zombie is left) reads the box's
# cgroup at once, before the engine removes it, then goes on as SIGUSR1. SIGTERM ends it at the
# next check. Send signals only after the header line was read.
#
# Output (stdout; tokens separated by one space; every line ends with a newline):
#   pybox-watch 1 cgroup=<VERSION> start=<cs>
#   sample <cs> box <key>=<value> ...        or   sample <cs> box gone
#   final <cs> box <key>=<value> ...         or   final <cs> box gone
#   final <cs> parent <key>=<value> ...      or   final <cs> parent gone
#   end final|wait_timeout|time|signal
# <cs>: /proc/uptime (CLOCK_BOOTTIME) in centiseconds. <value>: the decimal integer the kernel
# wrote, or - when the file or key could not be read as one. Every reading of a present cgroup
# carries every key of its version, in a fixed order. `gone`: the cgroup directory is missing.

if [ $# -ne 11 ]; then
    echo "pybox-watch: expected 11 arguments, got $#" >&2
    exit 2
fi
case $1 in
1 | 2) ;;
*)
    echo "pybox-watch: cgroup version must be 1 or 2" >&2
    exit 2
    ;;
esac

exited=
stopped=
ended=
box_line=
trap 'exited=1' USR1
trap 'ended=1' USR2
trap 'stopped=1' TERM

version=$1 root=$2 box=$3 parent=$4
fast_gap=$5 fast_samples=$6 slow_gap=$7 max_samples=$8 max_run=$9
final_gap=${10} final_polls=${11}

# Sets now: uptime in centiseconds (the kernel always prints two decimals).
now() {
    read -r up rest </proc/uptime
    now=$((${up%.*} * 100 + 1${up#*.} - 100))
}

# Appends " KEY=VALUE" to line; VALUE becomes - unless it is 1-19 decimal digits.
put() {
    case $2 in
    '' | *[!0-9]* | ????????????????????*) line="$line $1=-" ;;
    *) line="$line $1=$2" ;;
    esac
}

# One single-value file: DIR FILE.
one() {
    value=
    read -r value <"$1/$2"
    put "$2" "$value"
}

# The wanted keys of a "key value" file: DIR FILE KEY...
keyed() {
    dir=$1 file=$2
    shift 2
    for want; do
        value=
        while read -r key rest; do
            if [ "$key" = "$want" ]; then
                value=$rest
                break
            fi
        done <"$dir/$file"
        put "$file.$want" "$value"
    done
}

read_v1() {
    m=$root/memory$1 c=$root/cpu$1 a=$root/cpuacct$1 p=$root/pids$1
    one "$m" memory.usage_in_bytes
    one "$m" memory.max_usage_in_bytes
    one "$m" memory.memsw.usage_in_bytes
    one "$m" memory.memsw.max_usage_in_bytes
    keyed "$m" memory.oom_control oom_kill
    keyed "$c" cpu.stat nr_periods nr_throttled throttled_time
    one "$a" cpuacct.usage
    one "$a" cpuacct.usage_user
    one "$a" cpuacct.usage_sys
    one "$p" pids.current
    one "$p" pids.peak
    keyed "$p" pids.events max
}

read_v2() {
    d=$root$1
    one "$d" memory.current
    one "$d" memory.peak
    one "$d" memory.swap.current
    one "$d" memory.swap.peak
    keyed "$d" memory.events max oom oom_kill
    keyed "$d" cpu.stat usage_usec user_usec system_usec nr_periods nr_throttled throttled_usec
    one "$d" pids.current
    one "$d" pids.peak
    keyed "$d" pids.events max
    keyed "$d" pids.events.local max
}

# Prints one reading: KIND (sample|final) SCOPE (box|parent) CGROUP.
# Sets line to one reading: KIND (sample|final) SCOPE (box|parent) CGROUP.
take_reading() {
    now
    if [ "$version" = 1 ]; then probe=$root/memory$3; else probe=$root$3; fi
    if [ -d "$probe" ]; then
        line="$1 $now $2"
        read_v$version "$3"
    else
        line="$1 $now $2 gone"
    fi
}

# Prints one reading.
reading() {
    take_reading "$@"
    printf '%s\n' "$line"
}

finish() {
    printf 'end %s\n' "$1"
    exit 0
}

# Sleeps MS milliseconds; a trapped signal cuts it short, also one that came while a reading
# was taken (its trap has run by now, so wait would not return early for it).
nap() {
    frac=$(($1 % 1000 + 1000))
    sleep "$(($1 / 1000)).${frac#1}" >/dev/null &
    sleeper=$!
    if [ -n "$ended$exited$stopped" ] || ! wait "$sleeper"; then kill "$sleeper" 2>/dev/null; fi
}

final_phase() {
    if [ "$version" = 1 ]; then tasks=$root/pids$parent/pids.current; else tasks=$root$parent/pids.current; fi
    polls=0
    while :; do
        if [ -n "$stopped" ]; then finish signal; fi
        value=
        read -r value <"$tasks"
        if [ "$value" = 0 ]; then break; fi
        if [ "$polls" -ge "$final_polls" ]; then finish wait_timeout; fi
        polls=$((polls + 1))
        nap "$final_gap"
    done
    if [ -n "$box_line" ]; then printf '%s\n' "$box_line"; else reading final box "$box"; fi
    reading final parent "$parent"
    finish final
}

now
start=$now
stop_at=$((start + max_run))
printf 'pybox-watch 1 cgroup=%s start=%s\n' "$version" "$start"
taken=0
while :; do
    gap=$slow_gap
    if [ "$taken" -lt "$max_samples" ]; then
        reading sample box "$box"
        taken=$((taken + 1))
        if [ "$taken" -lt "$fast_samples" ]; then gap=$fast_gap; fi
    else
        now
    fi
    left=$(((stop_at - now) * 10))
    if [ "$left" -le 0 ]; then finish time; fi
    if [ "$gap" -gt "$left" ]; then gap=$left; fi
    nap "$gap"
    if [ -n "$stopped" ]; then finish signal; fi
    if [ -n "$ended" ]; then
        take_reading final box "$box"
        box_line=$line
        final_phase
    fi
    if [ -n "$exited" ]; then final_phase; fi
done
