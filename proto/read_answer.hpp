// One answer of the daemon, or another of PyBox's own documents, read whole with a
// util::ObjectReader; internal to proto/ (answers.cpp, repair.cpp).
#pragma once

#include "common/api_error_codes.hpp"
#include "common/error.hpp"
#include "util/json_reader.hpp"
#include "util/read_mode.hpp"
#include "util/text.hpp"

#include <boost/json/value.hpp>

#include <string>
#include <string_view>

namespace pybox::proto {

// `read` runs on a reader of the document, and its first problem becomes Error
// "invalid_answer" naming `what` ("attempts answer").
template <class T, class Read>
Expected<T> read_answer(const boost::json::value& document, util::ReadMode mode, std::string_view what, Read read)
{
    std::string error;
    util::ObjectReader reader(document, "", error, mode);
    T answer = read(reader);
    reader.finish();
    if (!error.empty())
        return make_error(api_error::k_invalid_answer,
                          "The daemon's " + std::string(what) + " cannot be read: " + util::printable_excerpt(error, 200) + ".");
    return answer;
}

}  // namespace pybox::proto
