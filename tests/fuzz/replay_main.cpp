// Corpus replay for the fuzz targets when libFuzzer is not available (g++ builds): each
// argument is a file, or a folder whose files, whose bytes are handed to LLVMFuzzerTestOneInput
// once (ctest passes the target's committed seed corpus, tests/fuzz/corpus/<target>/); then a
// fixed set of generated inputs follows, so the target also sees bytes nobody wrote by hand.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

void replay(const std::string& bytes)
{
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}

std::size_t replay_path(const std::filesystem::path& path)
{
    if (std::filesystem::is_directory(path)) {
        std::size_t count = 0;
        for (const auto& entry : std::filesystem::directory_iterator(path)) count += replay_path(entry.path());
        return count;
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::cerr << "cannot read " << path << "\n";
        std::exit(2);
    }
    replay(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
    return 1;
}

}  // namespace

int main(int argc, char** argv)
{
    std::size_t seeds = 0;
    for (int i = 1; i < argc; ++i) seeds += replay_path(argv[i]);
    std::mt19937 random(12345);
    std::uniform_int_distribution<int> byte(0, 255);
    std::uniform_int_distribution<int> length(0, 4096);
    for (int round = 0; round < 2000; ++round) {
        std::string bytes(static_cast<std::size_t>(length(random)), '\0');
        for (auto& b : bytes) b = static_cast<char>(byte(random));
        replay(bytes);
    }
    std::cout << "replayed " << seeds << " seed inputs and 2000 random inputs\n";
    return 0;
}
