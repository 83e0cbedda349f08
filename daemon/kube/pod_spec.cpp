#include "daemon/kube/pod_spec.hpp"

#include "daemon/kube/pod_state.hpp"
#include "proto/box_policy.hpp"

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <span>
#include <stdexcept>
#include <utility>

namespace pybox::kube {

namespace json = boost::json;

namespace {

constexpr std::string_view k_tmp_volume = "tmp";
constexpr std::string_view k_box_seccomp_annotation = "container.seccomp.security.alpha.kubernetes.io/box";

// The kubelet expands $(NAME) in a container's command and environment values and turns "$$"
// into "$": every '$' is doubled, so the box gets exactly the text PyBox meant.
std::string literal(std::string_view text)
{
    std::string escaped;
    escaped.reserve(text.size());
    for (const char c : text) {
        escaped += c;
        if (c == '$') escaped += '$';
    }
    return escaped;
}

json::array literal_array(const std::vector<std::string>& strings)
{
    json::array array;
    for (const auto& s : strings) array.emplace_back(literal(s));
    return array;
}

std::int64_t id_number(std::string_view text, const std::string& user)
{
    std::int64_t id = -1;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), id);
    if (error != std::errc() || end != text.data() + text.size() || id < 0)
        throw std::invalid_argument("the box policy's user \"" + user + "\" is not UID[:GID]");
    return id;
}

// An environment entry "NAME=VALUE" as an EnvVar. An empty value is left out, as the apiserver
// writes it back (EnvVar.value is omitempty).
json::object env_var(const std::string& entry)
{
    const auto equals = entry.find('=');
    json::object var{{"name", entry.substr(0, equals)}};
    if (equals != std::string::npos && equals + 1 < entry.size()) var["value"] = literal(std::string_view(entry).substr(equals + 1));
    return var;
}

json::object seccomp_profile(const PodSettings& settings)
{
    if (settings.seccomp_localhost_profile.empty()) return {{"type", "RuntimeDefault"}};
    return {{"type", "Localhost"}, {"localhostProfile", settings.seccomp_localhost_profile}};
}

json::object container_security_context(const proto::BoxPolicy& policy, const PodSettings& settings)
{
    const auto colon = policy.user.find(':');
    json::object context{{"runAsUser", id_number(std::string_view(policy.user).substr(0, colon), policy.user)}};
    if (colon != std::string::npos)
        context["runAsGroup"] = id_number(std::string_view(policy.user).substr(colon + 1), policy.user);
    context["runAsNonRoot"] = true;
    context["readOnlyRootFilesystem"] = policy.readonly_root;
    context["allowPrivilegeEscalation"] = !policy.no_new_privileges;
    context["privileged"] = false;
    context["capabilities"] = json::object{{"drop", json::array{json::value(policy.capabilities_dropped)}}};
    context["seccompProfile"] = seccomp_profile(settings);
    return context;
}

json::object box_container(const engine::BoxSpec& spec, const PodSettings& settings)
{
    const proto::BoxPolicy& policy = spec.policy;
    const json::object amounts{{"memory", memory_quantity(policy.memory_bytes)}, {"cpu", cpu_quantity(policy.cpu_millis)}};
    json::array env;
    for (const auto& entry : spec.environment) env.emplace_back(env_var(entry));
    return json::object{
        {"name", k_box_container},
        {"image", settings.image},
        {"imagePullPolicy", "IfNotPresent"},
        {"command", literal_array(spec.command)},
        {"env", std::move(env)},
        // The program's current folder, as in a local box: the image's own may be on the
        // read-only root.
        {"workingDir", policy.tmpfs_path},
        {"stdin", true},
        {"stdinOnce", false},
        {"tty", false},
        {"resources", json::object{{"requests", amounts}, {"limits", amounts}}},
        {"securityContext", container_security_context(policy, settings)},
        {"volumeMounts", json::array{json::object{{"name", k_tmp_volume}, {"mountPath", policy.tmpfs_path}}}},
        // The file the fed box's feeder records PyBox's kill in, which the kubelet reports as the
        // container's termination message (kube_box_engine.hpp): set, not left to defaulting.
        {"terminationMessagePath", proto::k_fed_termination_log},
        {"terminationMessagePolicy", "File"},
    };
}

// --- The check -----------------------------------------------------------------------------

// Fields the apiserver may add to the Pod PyBox asked for that grant nothing, each with the only
// values accepted. `object` is the JSON path of the object holding `key`. Everything else PyBox
// did not set is a mismatch.
struct AcceptedDefault {
    std::string_view object;
    std::string_view key;
    bool (*accepts)(const json::value& observed, const json::object& asked);
};

bool is_string(const json::value& observed, const json::object&) { return observed.is_string(); }

bool is_nonempty_string(const json::value& observed, const json::object&)
{
    return observed.is_string() && !observed.get_string().empty();
}

bool is_array(const json::value& observed, const json::object&) { return observed.is_array(); }

bool is_anything(const json::value&, const json::object&) { return true; }

template <const char* text>
bool is_text(const json::value& observed, const json::object&)
{
    return observed.is_string() && observed.get_string() == text;
}

bool is_zero(const json::value& observed, const json::object&)
{
    return (observed.is_int64() && observed.get_int64() == 0) || (observed.is_uint64() && observed.get_uint64() == 0);
}

// The seccompProfile field of the asked box container in the deprecated annotation's words:
// "runtime/default", "localhost/<profile>" (Kubernetes' SeccompAnnotationForField).
std::string seccomp_annotation_of(const json::object& asked)
{
    const json::value* profile = nullptr;
    if (const auto* spec = asked.if_contains("spec"); spec && spec->is_object())
        if (const auto* containers = spec->get_object().if_contains("containers");
            containers && containers->is_array() && !containers->get_array().empty())
            if (const auto* container = containers->get_array().front().if_object())
                if (const auto* context = container->if_contains("securityContext"); context && context->is_object())
                    profile = context->get_object().if_contains("seccompProfile");
    if (profile == nullptr || !profile->is_object()) return {};
    const auto* type = profile->get_object().if_contains("type");
    const auto* file = profile->get_object().if_contains("localhostProfile");
    if (type == nullptr || !type->is_string()) return {};
    if (type->get_string() == "RuntimeDefault") return "runtime/default";
    if (type->get_string() == "Localhost" && file != nullptr && file->is_string())
        return "localhost/" + std::string(file->get_string());
    return {};
}

bool is_asked_seccomp_annotation(const json::value& observed, const json::object& asked)
{
    const std::string expected = seccomp_annotation_of(asked);
    return !expected.empty() && observed.is_string() && observed.get_string() == expected;
}

// The tolerations of the DefaultTolerationSeconds admission plugin: NoExecute for a node that is
// not ready or unreachable, for some seconds. They only say how long the Pod may stay on such a
// node.
bool is_default_toleration(const json::value& item)
{
    const auto* toleration = item.if_object();
    if (toleration == nullptr || toleration->size() != 4) return false;
    const auto* key = toleration->if_contains("key");
    const auto* op = toleration->if_contains("operator");
    const auto* effect = toleration->if_contains("effect");
    const auto* seconds = toleration->if_contains("tolerationSeconds");
    return key && key->is_string() &&
           (key->get_string() == "node.kubernetes.io/not-ready" || key->get_string() == "node.kubernetes.io/unreachable") &&
           op && op->is_string() && op->get_string() == "Exists" && effect && effect->is_string() &&
           effect->get_string() == "NoExecute" && seconds && seconds->is_int64() && seconds->get_int64() >= 0;
}

bool are_default_tolerations(const json::value& observed, const json::object&)
{
    const auto* tolerations = observed.if_array();
    if (tolerations == nullptr || tolerations->size() > 2) return false;
    if (!std::all_of(tolerations->begin(), tolerations->end(), is_default_toleration)) return false;
    return tolerations->size() < 2 || tolerations->at(0).at("key") != tolerations->at(1).at("key");
}

constexpr char k_cluster_first[] = "ClusterFirst";
constexpr char k_default_scheduler[] = "default-scheduler";
constexpr char k_default_account[] = "default";
constexpr char k_preempt_lower[] = "PreemptLowerPriority";
constexpr char k_default_proc_mount[] = "Default";

constexpr AcceptedDefault k_accepted_defaults[] = {
    // The Pod's state, which pod_state.hpp reads; not a setting.
    {"", "status", is_anything},
    // The API's bookkeeping of the object: where it lives (the namespace PyBox posted to), its
    // identity, version, creation time, self link (to 1.19) and field owners.
    {"metadata", "namespace", is_string},
    {"metadata", "uid", is_string},
    {"metadata", "resourceVersion", is_string},
    {"metadata", "creationTimestamp", is_string},
    {"metadata", "selfLink", is_string},
    {"metadata", "managedFields", is_array},
    // Kubernetes 1.19 to 1.24 copy the container's seccompProfile into this deprecated annotation
    // (the seccomp version skew): only with the value that names the asked profile.
    {"metadata.annotations", k_box_seccomp_annotation, is_asked_seccomp_annotation},
    // The PodSecurityPolicy admission plugin (to 1.24) names the policy that admitted the Pod;
    // whatever that policy changed is in the fields, which are checked.
    {"metadata.annotations", "kubernetes.io/psp", is_string},
    // Defaulting: the cluster's DNS (PyBox sets no dnsPolicy) and the default scheduler.
    {"spec", "dnsPolicy", is_text<k_cluster_first>},
    {"spec", "schedulerName", is_text<k_default_scheduler>},
    // The ServiceAccount admission plugin names the namespace's default account; its token is not
    // mounted (automountServiceAccountToken false is checked, and any volume is a mismatch).
    {"spec", "serviceAccountName", is_text<k_default_account>},
    {"spec", "serviceAccount", is_text<k_default_account>},
    // The Priority admission plugin without a default PriorityClass, and defaulting's preemption
    // policy (1.19 on): the order of scheduling and eviction only.
    {"spec", "priority", is_zero},
    {"spec", "preemptionPolicy", is_text<k_preempt_lower>},
    {"spec", "tolerations", are_default_tolerations},
    // The scheduler's placement, when PyBox named no node.
    {"spec", "nodeName", is_nonempty_string},
    // Defaulting with the ProcMountType gate: the default, masked /proc (never "Unmasked").
    {"spec.containers[0].securityContext", "procMount", is_text<k_default_proc_mount>},
};

// Objects the apiserver may add whole although PyBox set none: each key in them must be an
// accepted default. Defaulting writes an empty pod-level securityContext.
constexpr std::string_view k_defaulted_objects[] = {"metadata.annotations", "spec.securityContext"};

// Booleans the apiserver writes back only when true (omitempty on a plain bool): asked false,
// their absence reads as false.
constexpr std::string_view k_false_when_omitted[] = {
    "spec.hostNetwork", "spec.hostPID", "spec.hostIPC", "spec.containers[0].stdinOnce", "spec.containers[0].tty"};

bool contains(std::span<const std::string_view> list, std::string_view item)
{
    return std::find(list.begin(), list.end(), item) != list.end();
}

bool is_plain_key(std::string_view key)
{
    return !key.empty() &&
           std::all_of(key.begin(), key.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// "spec.containers[0]" + "image"; a key that is not a plain name (a label, an annotation) in
// brackets: metadata.labels["pybox.run"].
std::string child_path(const std::string& path, std::string_view key)
{
    if (!is_plain_key(key)) return path + "[" + json::serialize(json::value(key)) + "]";
    return path.empty() ? std::string(key) : path + "." + std::string(key);
}

bool is_empty_container(const json::value& value)
{
    return (value.is_array() && value.get_array().empty()) || (value.is_object() && value.get_object().empty());
}

class PodChecker {
public:
    explicit PodChecker(const json::object& asked) : m_asked(asked) {}

    std::vector<engine::SettingMismatch> take() { return std::move(m_mismatches); }

    void check(const json::value& read_back)
    {
        if (read_back.is_object())
            compare_object(m_asked, read_back, "");
        else
            mismatch("pod", "a Pod object", &read_back);
    }


private:
    void compare(const json::value& asked, const json::value* observed, const std::string& path, bool quantity)
    {
        if (observed == nullptr) {
            const bool omitted_false = asked.is_bool() && !asked.get_bool() && contains(k_false_when_omitted, path);
            if (!omitted_false && !is_empty_container(asked)) mismatch(path, json::serialize(asked), nullptr);
            return;
        }
        if (const auto* object = asked.if_object()) {
            compare_object(*object, *observed, path);
        } else if (const auto* array = asked.if_array()) {
            compare_array(*array, *observed, path);
        } else if (quantity && asked.is_string() && observed->is_string()) {
            const auto expected = quantity_millis(asked.get_string());
            if (!expected || expected != quantity_millis(observed->get_string()))
                mismatch(path, json::serialize(asked), observed);
        } else if (asked != *observed) {
            mismatch(path, json::serialize(asked), observed);
        }
    }

    void compare_object(const json::object& asked, const json::value& observed, const std::string& path)
    {
        const auto* fields = observed.if_object();
        if (fields == nullptr) {
            mismatch(path, json::serialize(asked), &observed);
            return;
        }
        const bool quantities = path.ends_with("resources.requests") || path.ends_with("resources.limits");
        for (const auto& [key, value] : asked)
            compare(value, fields->if_contains(key), child_path(path, key), quantities || key == "sizeLimit");
        for (const auto& [key, value] : *fields)
            if (!asked.contains(key)) extra(path, key, value);
    }

    void compare_array(const json::array& asked, const json::value& observed, const std::string& path)
    {
        const auto* items = observed.if_array();
        if (items == nullptr) {
            mismatch(path, json::serialize(asked), &observed);
            return;
        }
        for (std::size_t i = 0; i < std::max(asked.size(), items->size()); ++i) {
            const std::string item_path = path + "[" + std::to_string(i) + "]";
            if (i >= asked.size())
                mismatch(item_path, "absent", &(*items)[i]);
            else
                compare(asked[i], i < items->size() ? &(*items)[i] : nullptr, item_path, false);
        }
    }

    // A field PyBox did not set.
    void extra(const std::string& object_path, std::string_view key, const json::value& observed)
    {
        const auto accepted = std::find_if(std::begin(k_accepted_defaults), std::end(k_accepted_defaults),
                                           [&](const AcceptedDefault& d) { return d.object == object_path && d.key == key; });
        if (accepted != std::end(k_accepted_defaults) && accepted->accepts(observed, m_asked)) return;
        const std::string path = child_path(object_path, key);
        if (contains(k_defaulted_objects, path) && observed.is_object()) {
            compare_object(json::object{}, observed, path);
            return;
        }
        mismatch(path, "absent", &observed);
    }

    void mismatch(const std::string& path, std::string expected, const json::value* observed)
    {
        m_mismatches.push_back({path, std::move(expected), observed == nullptr ? "missing" : json::serialize(*observed)});
    }

    const json::object& m_asked;
    std::vector<engine::SettingMismatch> m_mismatches;
};

const json::value& field_or_null(const json::value& object, std::string_view key)
{
    static const json::value null;
    if (const auto* fields = object.if_object())
        if (const auto* value = fields->if_contains(key)) return *value;
    return null;
}

json::object pod_record(const json::value& read_back, const std::vector<engine::SettingMismatch>& mismatches)
{
    const json::value& metadata = field_or_null(read_back, "metadata");
    json::object metadata_record;
    for (std::string_view key : {"name", "uid", "labels", "annotations"}) metadata_record[key] = field_or_null(metadata, key);
    json::array mismatch_list;
    for (const auto& m : mismatches)
        mismatch_list.push_back(json::object{{"field", m.field}, {"expected", m.expected}, {"observed", m.observed}});
    return json::object{{"source", "the Pod as the apiserver holds it after admission, checked before the program "
                                   "and again once it ended"},
                        {"metadata", std::move(metadata_record)},
                        {"spec", field_or_null(read_back, "spec")},
                        {"mismatches", std::move(mismatch_list)}};
}

// The image of the asked Pod's box container (make_pod's: its only container).
std::string asked_image(const json::object& asked)
{
    const auto& container = asked.at("spec").at("containers").at(0);
    return std::string(container.at("image").as_string());
}

bool multiply(std::int64_t a, std::int64_t b, std::int64_t& product) { return !__builtin_mul_overflow(a, b, &product); }

// The seccomp profile type of the box container as the apiserver holds it, or empty.
std::string box_seccomp_type(const json::value& read_back)
{
    const auto* containers = read_back.is_object() ? read_back.get_object().if_contains("spec") : nullptr;
    containers = containers != nullptr && containers->is_object() ? containers->get_object().if_contains("containers") : nullptr;
    if (containers == nullptr || !containers->is_array()) return {};
    for (const auto& item : containers->get_array()) {
        const auto* container = item.if_object();
        const auto* name = container != nullptr ? container->if_contains("name") : nullptr;
        if (name == nullptr || !name->is_string() || name->get_string() != k_box_container) continue;
        const auto* context = container->if_contains("securityContext");
        const auto* profile = context != nullptr && context->is_object() ? context->get_object().if_contains("seccompProfile")
                                                                          : nullptr;
        const auto* type = profile != nullptr && profile->is_object() ? profile->get_object().if_contains("type") : nullptr;
        return type != nullptr && type->is_string() ? std::string(type->get_string()) : std::string();
    }
    return {};
}

}  // namespace

std::string memory_quantity(std::int64_t bytes)
{
    static constexpr std::pair<std::int64_t, std::string_view> k_suffixes[] = {
        {std::int64_t{1} << 40, "Ti"}, {std::int64_t{1} << 30, "Gi"}, {std::int64_t{1} << 20, "Mi"}, {std::int64_t{1} << 10, "Ki"}};
    for (const auto& [unit, suffix] : k_suffixes)
        if (bytes > 0 && bytes % unit == 0) return std::to_string(bytes / unit) + std::string(suffix);
    return std::to_string(bytes);
}

std::string cpu_quantity(std::int64_t millis)
{
    if (millis % 1000 == 0) return std::to_string(millis / 1000);
    return std::to_string(millis) + "m";
}

std::optional<std::int64_t> quantity_millis(std::string_view quantity)
{
    static constexpr std::pair<std::string_view, std::int64_t> k_multipliers[] = {
        {"", 1000},
        {"m", 1},
        {"k", 1'000'000},
        {"M", 1'000'000'000},
        {"G", 1'000'000'000'000},
        {"T", 1'000'000'000'000'000},
        {"Ki", std::int64_t{1000} << 10},
        {"Mi", std::int64_t{1000} << 20},
        {"Gi", std::int64_t{1000} << 30},
        {"Ti", std::int64_t{1000} << 40},
    };
    const auto digits_end = [&](std::size_t from) {
        while (from < quantity.size() && quantity[from] >= '0' && quantity[from] <= '9') ++from;
        return from;
    };
    const std::size_t whole_end = digits_end(0);
    if (whole_end == 0 || whole_end > 15) return std::nullopt;  // with 3 decimals, within int64
    std::size_t number_end = whole_end;
    if (number_end < quantity.size() && quantity[number_end] == '.') {
        number_end = digits_end(whole_end + 1);
        if (number_end == whole_end + 1 || number_end - whole_end - 1 > 3) return std::nullopt;
    }
    const auto multiplier = std::find_if(std::begin(k_multipliers), std::end(k_multipliers),
                                         [&](const auto& m) { return m.first == quantity.substr(number_end); });
    if (multiplier == std::end(k_multipliers)) return std::nullopt;
    // The number without its point, and the power of ten that point stood for.
    std::int64_t scaled = 0;
    std::int64_t scale = 1;
    for (std::size_t i = 0; i < number_end; ++i) {
        if (quantity[i] == '.') continue;
        scaled = scaled * 10 + (quantity[i] - '0');
        if (i > whole_end) scale *= 10;
    }
    std::int64_t millis_times_scale = 0;
    if (!multiply(scaled, multiplier->second, millis_times_scale) || millis_times_scale % scale != 0) return std::nullopt;
    return millis_times_scale / scale;
}

json::object make_pod(const engine::BoxSpec& spec, const PodSettings& settings)
{
    const proto::BoxPolicy& policy = spec.policy;
    json::object labels;
    for (const auto& [key, value] : spec.labels) labels[key] = value;
    json::object pod_spec{
        {"containers", json::array{box_container(spec, settings)}},
        {"volumes", json::array{json::object{
                        {"name", k_tmp_volume},
                        {"emptyDir", json::object{{"medium", "Memory"}, {"sizeLimit", memory_quantity(policy.tmpfs_bytes)}}}}}},
        {"restartPolicy", "Never"},
        {"terminationGracePeriodSeconds", 0},
        {"activeDeadlineSeconds", settings.active_deadline_s},
        {"automountServiceAccountToken", false},
        {"enableServiceLinks", false},
        {"hostNetwork", false},
        {"hostPID", false},
        {"hostIPC", false},
        {"shareProcessNamespace", false},
        {"hostname", spec.hostname},
    };
    if (!settings.node_name.empty()) pod_spec["nodeName"] = settings.node_name;
    return json::object{
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata", json::object{{"name", spec.name}, {"labels", std::move(labels)}}},
        {"spec", std::move(pod_spec)},
    };
}

engine::SettingsCheck check_pod(const json::object& asked, const json::value& read_back)
{
    PodChecker checker(asked);
    checker.check(read_back);
    engine::SettingsCheck check;
    check.mismatches = checker.take();
    // The image the node ran, once the kubelet reported it: its imageID ends with the digest of
    // the image asked for ("docker-pullable://REGISTRY/NAME@sha256:DIGEST").
    const std::string ran = pod_facts(read_back).image_id;
    const std::string image = asked_image(asked);
    if (!ran.empty() && !ran.ends_with(image.substr(std::min(image.find('@'), image.size()))))
        check.mismatches.push_back({std::string(k_ran_image_field), image, ran});
    check.record = pod_record(read_back, check.mismatches);
    check.record["image_id"] = ran.empty() ? json::value(nullptr) : json::value(ran);
    if (box_seccomp_type(read_back) == "RuntimeDefault")
        check.unknown.emplace_back("seccomp_profile",
                                   "the box ran under its node's default seccomp profile (RuntimeDefault), not PyBox's "
                                   "(configured.seccomp), because the node lacked PyBox's profile file "
                                   "(observed.effective_policy.seccomp_fallback); the runtime's default allows system "
                                   "calls PyBox's profile denies (Docker's, for one, allows ptrace, process_vm_readv, "
                                   "io_uring_setup and memfd_create), and which ones exactly depends on the node's "
                                   "runtime and its version, which PyBox does not observe");
    return check;
}

}  // namespace pybox::kube
