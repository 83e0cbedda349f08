#include "common/version.hpp"

namespace pybox {

std::string_view version_number()
{
    return PYBOX_VERSION_NUMBER;
}

const std::string& version()
{
    static const std::string text = std::string(version_number()) + "+" + std::string(revision());
    return text;
}

}  // namespace pybox
