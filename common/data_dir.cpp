#include "common/data_dir.hpp"

#include "common/api_error_codes.hpp"

#ifdef __APPLE__
#include <mach-o/dyld.h>
#endif

#include <cstdint>
#include <string>
#include <system_error>

namespace pybox {

namespace {

Expected<std::filesystem::path> own_program()
{
    std::error_code ec;
#ifdef __APPLE__
    std::uint32_t size = 0;
    _NSGetExecutablePath(nullptr, &size);
    std::string path(size, '\0');
    if (_NSGetExecutablePath(path.data(), &size) != 0)
        return make_error(api_error::k_data_missing, "Cannot find the path of the running program (_NSGetExecutablePath).");
    path.resize(path.find('\0'));
    auto program = std::filesystem::canonical(path, ec);
#else
    auto program = std::filesystem::read_symlink("/proc/self/exe", ec);
#endif
    if (ec) return make_error(api_error::k_data_missing, "Cannot find the path of the running program: " + ec.message() + ".");
    return program;
}

}  // namespace

Expected<std::filesystem::path> own_program_dir()
{
    auto program = own_program();
    if (!program) return program.error();
    return program->parent_path();
}

Expected<std::filesystem::path> data_dir()
{
    auto dir = own_program_dir();
    if (!dir) return dir.error();
    return (*dir / PYBOX_DATA_FROM_BINDIR).lexically_normal();
}

Expected<std::filesystem::path> data_subdir(const std::filesystem::path& name)
{
    auto base = data_dir();
    if (!base) return base.error();
    const auto dir = *base / name;
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
        const auto program = own_program();
        return make_error(api_error::k_data_missing, "PyBox's data folder " + dir.string() + " is missing (looked next to " +
                                              (program ? program->string() : std::string("this program")) +
                                              "); reinstall PyBox.");
    }
    return dir;
}

}  // namespace pybox
