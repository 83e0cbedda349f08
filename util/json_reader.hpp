// ObjectReader: reads one JSON object field by field, for strict and tolerant readers of
// documents.
//
// Two modes (ReadMode): strict refuses keys that were never read (tests, fuzzing, saved
// documents checked for exactness); tolerant ignores them, as the reader of a document a newer
// program wrote must. Both refuse a missing key or a value of the wrong type.
//
// Errors: the first problem found anywhere is kept in the shared error string, as the path and
// the problem ("images[0].seconds must be a number"); after a problem, readers return defaults.
// Borrows the value and the error string, which must outlive it. Pure.
#pragma once

#include "util/read_mode.hpp"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace pybox::util {

class ObjectReader {
public:
    ObjectReader(const boost::json::value& value, std::string path, std::string& error, ReadMode mode);

    ReadMode mode() const { return m_mode; }
    // Strict mode: refuses keys that were never read. Tolerant mode: nothing to check.
    void finish();
    std::vector<std::string> keys() const;

    const boost::json::value& any(std::string_view key);
    // A JSON value kept as it is, refused when a number anywhere in it is not finite: such a
    // value cannot be compared or written back.
    const boost::json::value& kept(std::string_view key);
    // The value under `key`, or nullptr when the key is absent (not an error).
    const boost::json::value* if_present(std::string_view key);
    ObjectReader object(std::string_view key);
    const boost::json::array& array(std::string_view key);
    // Each element of the array under `key` as an object, with its path ("key[i]").
    std::vector<ObjectReader> objects(std::string_view key);
    std::string string(std::string_view key);
    std::optional<std::string> optional_string(std::string_view key);
    bool boolean(std::string_view key);
    std::int64_t int64(std::string_view key);
    std::optional<std::int64_t> optional_int64(std::string_view key, bool null_allowed = true);
    std::uint64_t uint64(std::string_view key);
    // A uid or gid: an integer from 0 to 2^32 - 1.
    std::uint32_t uint32(std::string_view key);
    // An int-sized integer; with `optional`, null is allowed and stored there.
    int small_int(std::string_view key, std::optional<int>* optional = nullptr);
    std::optional<double> optional_number(std::string_view key, bool null_allowed = true);
    double number(std::string_view key);
    std::vector<std::string> strings(std::string_view key);

    void fail(std::string_view key, std::string_view problem);
    std::string child_path(std::string_view key) const;

private:
    void expect(std::string_view key, std::string_view what);

    const boost::json::object* m_object = nullptr;
    std::string m_path;
    std::string& m_error;
    ReadMode m_mode;
    std::set<std::string> m_read;
};

}  // namespace pybox::util
