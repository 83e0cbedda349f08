// Where images live in a registry, as PyBox names them: the registry of a cluster entry
// ("HOST[:PORT]/PREFIX", config's image_registry) and an image pinned by its manifest digest
// ("HOST[:PORT]/PREFIX/NAME@sha256:HEX", or Docker Hub's short "python@sha256:HEX"), never by a
// tag: a tag can be moved, a digest names the bytes. Pure; unit-tested and fuzzed.
//
// The grammar is Docker's (distribution/reference), narrowed: a host is an IP address (IPv6 in
// brackets) or DNS labels, with an optional decimal port; a repository is 1-8 lower-case path
// components ([a-z0-9] runs joined by '.', '_', '__' or '-'s), at most 255 bytes in all; a
// digest is "sha256:" and 64 lower-case hex digits. The first component is a host when it holds
// '.' or ':' or is "localhost" (Docker's rule), else the reference is Docker Hub's. Anything
// else, and any tag, is refused with "image_reference_invalid" and a sentence saying what.
#pragma once

#include "common/error.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pybox::registry {

inline constexpr std::size_t k_max_reference_bytes = 512;

// The stdlib image the seed pins for macOS (docs/reference.md's seed: Docker Hub's python,
// linux/arm64), taken by `pybox setup` where no image can be built (config.json's stdlib_image).
inline constexpr std::string_view k_seed_stdlib_image =
    "python@sha256:70729b46c69b4f1e97c4822c1af3df53a1476cf5ddc6c087c0c10bc3a5678c2f";

// A host and its optional port, as written ("127.0.0.1:5000", "[::1]:5000", "registry.example").
struct RegistryHost {
    std::string host;  // without brackets: "::1"
    std::optional<std::uint16_t> port;
    std::string authority() const;  // as written in a reference or a URL's Host
    friend bool operator==(const RegistryHost&, const RegistryHost&) = default;
};

// config's "image_registry": where a cluster entry's images are pushed.
struct RegistryAddress {
    RegistryHost host;
    std::string prefix;  // repository path before the image's name, e.g. "pybox"
    friend bool operator==(const RegistryAddress&, const RegistryAddress&) = default;
};

struct PinnedReference {
    std::optional<RegistryHost> registry;  // none: Docker Hub, as its short form
    std::string repository;                // "pybox/stdlib", "python"
    std::string digest;                    // "sha256:<64 hex>"
    // The reference as the engine writes it in RepoDigests ("python@sha256:..." for Docker Hub).
    std::string text() const;
    friend bool operator==(const PinnedReference&, const PinnedReference&) = default;
};

// "sha256:" followed by exactly 64 lower-case hex digits.
bool is_sha256_digest(std::string_view text);

Expected<RegistryAddress> parse_registry_address(std::string_view text);
Expected<PinnedReference> parse_pinned_reference(std::string_view text);

// The reference of image `name` (one path component) in `address`'s repository, at `digest`.
Expected<PinnedReference> reference_in(const RegistryAddress& address, std::string_view name, std::string_view digest);

}  // namespace pybox::registry
