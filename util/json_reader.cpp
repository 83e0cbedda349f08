#include "util/json_reader.hpp"

#include <cmath>
#include <limits>
#include <utility>

namespace pybox::util {

namespace json = boost::json;

namespace {

bool all_numbers_finite(const json::value& value)
{
    if (value.is_double()) {
        return std::isfinite(value.get_double());
    }
    if (value.is_array()) {
        for (const auto& item : value.get_array()) {
            if (!all_numbers_finite(item)) {
                return false;
            }
        }
    }
    if (value.is_object()) {
        for (const auto& [key, item] : value.get_object()) {
            if (!all_numbers_finite(item)) {
                return false;
            }
        }
    }
    return true;
}

}  // namespace

ObjectReader::ObjectReader(const json::value& value, std::string path, std::string& error, ReadMode mode)
    : m_path(std::move(path)), m_error(error), m_mode(mode)
{
    if (value.is_object()) {
        m_object = &value.get_object();
    } else {
        fail("", "must be an object");
    }
}

void ObjectReader::finish()
{
    if (m_mode == ReadMode::tolerant || m_object == nullptr || m_read.size() == m_object->size()) {
        return;
    }
    for (const auto& [key, value] : *m_object) {
        if (!m_read.contains(std::string(key))) {
            fail(key, "is not a known field");
            return;
        }
    }
}

std::vector<std::string> ObjectReader::keys() const
{
    std::vector<std::string> result;
    if (m_object != nullptr) {
        for (const auto& [key, value] : *m_object) {
            result.emplace_back(key);
        }
    }
    return result;
}

const json::value* ObjectReader::if_present(std::string_view key)
{
    const auto* found = m_object != nullptr ? m_object->if_contains(key) : nullptr;
    if (found != nullptr) {
        m_read.emplace(key);
    }
    return found;
}

const json::value& ObjectReader::any(std::string_view key)
{
    static const json::value null_value;
    if (m_object == nullptr) {
        return null_value;
    }
    const auto* found = if_present(key);
    if (found == nullptr) {
        fail(key, "is missing");
        return null_value;
    }
    return *found;
}

const json::value& ObjectReader::kept(std::string_view key)
{
    const auto& value = any(key);
    if (!all_numbers_finite(value)) {
        fail(key, "holds a number that is not finite");
    }
    return value;
}

ObjectReader ObjectReader::object(std::string_view key)
{
    return ObjectReader(any(key), child_path(key), m_error, m_mode);
}

const json::array& ObjectReader::array(std::string_view key)
{
    static const json::array empty;
    const auto& value = any(key);
    if (value.is_array()) {
        return value.get_array();
    }
    expect(key, "an array");
    return empty;
}

std::vector<ObjectReader> ObjectReader::objects(std::string_view key)
{
    std::vector<ObjectReader> readers;
    const auto& items = array(key);
    for (std::size_t i = 0; i < items.size(); ++i) {
        readers.emplace_back(items[i], child_path(key) + "[" + std::to_string(i) + "]", m_error, m_mode);
    }
    return readers;
}

std::string ObjectReader::string(std::string_view key)
{
    const auto& value = any(key);
    if (value.is_string()) {
        return std::string(value.get_string());
    }
    expect(key, "a string");
    return {};
}

std::optional<std::string> ObjectReader::optional_string(std::string_view key)
{
    const auto& value = any(key);
    if (value.is_null()) {
        return std::nullopt;
    }
    if (value.is_string()) {
        return std::string(value.get_string());
    }
    expect(key, "a string or null");
    return std::nullopt;
}

bool ObjectReader::boolean(std::string_view key)
{
    const auto& value = any(key);
    if (value.is_bool()) {
        return value.get_bool();
    }
    expect(key, "true or false");
    return false;
}

std::int64_t ObjectReader::int64(std::string_view key) { return optional_int64(key, false).value_or(0); }

std::optional<std::int64_t> ObjectReader::optional_int64(std::string_view key, bool null_allowed)
{
    const auto& value = any(key);
    if (null_allowed && value.is_null()) {
        return std::nullopt;
    }
    if (value.is_int64()) {
        return value.get_int64();
    }
    if (value.is_uint64() && value.get_uint64() <= std::numeric_limits<std::int64_t>::max()) {
        return static_cast<std::int64_t>(value.get_uint64());
    }
    expect(key, null_allowed ? "an integer or null" : "an integer");
    return std::nullopt;
}

std::uint64_t ObjectReader::uint64(std::string_view key)
{
    const auto& value = any(key);
    if (value.is_uint64()) {
        return value.get_uint64();
    }
    if (value.is_int64() && value.get_int64() >= 0) {
        return static_cast<std::uint64_t>(value.get_int64());
    }
    expect(key, "a non-negative integer");
    return 0;
}

std::uint32_t ObjectReader::uint32(std::string_view key)
{
    const auto& value = any(key);
    if (value.is_int64() && value.get_int64() >= 0 && value.get_int64() <= UINT32_MAX)
        return static_cast<std::uint32_t>(value.get_int64());
    if (value.is_uint64() && value.get_uint64() <= UINT32_MAX) return static_cast<std::uint32_t>(value.get_uint64());
    expect(key, "an integer from 0 to 4294967295");
    return 0;
}

int ObjectReader::small_int(std::string_view key, std::optional<int>* optional)
{
    const auto value = optional_int64(key, optional != nullptr);
    if (value && (*value < std::numeric_limits<int>::min() || *value > std::numeric_limits<int>::max())) {
        fail(key, "is out of range");
        return 0;
    }
    if (optional != nullptr && value) {
        *optional = static_cast<int>(*value);
    }
    return static_cast<int>(value.value_or(0));
}

std::optional<double> ObjectReader::optional_number(std::string_view key, bool null_allowed)
{
    const auto& value = any(key);
    if (null_allowed && value.is_null()) {
        return std::nullopt;
    }
    if (value.is_number()) {
        json::error_code ec;
        const double number = value.to_number<double>(ec);
        // Boost.JSON 1.81 reads some zero mantissas with huge exponents (0.0e774) as
        // infinity, which no PyBox document holds and no writer can write back.
        if (!ec && std::isfinite(number)) {
            return number;
        }
    }
    expect(key, null_allowed ? "a number or null" : "a number");
    return std::nullopt;
}

double ObjectReader::number(std::string_view key) { return optional_number(key, false).value_or(0); }

std::vector<std::string> ObjectReader::strings(std::string_view key)
{
    std::vector<std::string> result;
    const auto& items = array(key);
    for (const auto& item : items) {
        if (!item.is_string()) {
            fail(key, "must hold only strings");
            return {};
        }
        result.emplace_back(item.get_string());
    }
    return result;
}

void ObjectReader::fail(std::string_view key, std::string_view problem)
{
    if (m_error.empty()) {
        const std::string where = key.empty() ? m_path : child_path(key);
        m_error = (where.empty() ? std::string("the document") : where) + " " + std::string(problem);
    }
}

std::string ObjectReader::child_path(std::string_view key) const
{
    return m_path.empty() ? std::string(key) : m_path + "." + std::string(key);
}

void ObjectReader::expect(std::string_view key, std::string_view what) { fail(key, "must be " + std::string(what)); }

}  // namespace pybox::util
