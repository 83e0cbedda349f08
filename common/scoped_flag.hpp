// ScopedFlag: sets a bool for the lifetime of the object (e.g. "an operation is running", to
// refuse a second one that arrives meanwhile). Not thread-safe; the flag must outlive it.
#pragma once

namespace pybox {

class ScopedFlag {
public:
    explicit ScopedFlag(bool& flag) : m_flag(flag) { m_flag = true; }
    ~ScopedFlag() { m_flag = false; }
    ScopedFlag(const ScopedFlag&) = delete;
    ScopedFlag& operator=(const ScopedFlag&) = delete;

private:
    bool& m_flag;
};

}  // namespace pybox
