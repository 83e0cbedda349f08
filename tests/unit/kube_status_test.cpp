#include "daemon/kube/kube_status.hpp"

#include <catch2/catch.hpp>

using namespace pybox::kube;

TEST_CASE("A 403 Status names what the user may not do")
{
    const auto error = status_error(
        "POST /api/v1/namespaces/pybox-test/pods", 403,
        R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods is forbidden: User \"nobody\" cannot create resource \"pods\" in API group \"\" in the namespace \"pybox-test\"","reason":"Forbidden","details":{"kind":"pods"},"code":403})");
    CHECK(error.code == "engine_error");
    CHECK(error.message ==
          "POST /api/v1/namespaces/pybox-test/pods: the apiserver answered 403 Forbidden (Forbidden): pods is forbidden: "
          "User \"nobody\" cannot create resource \"pods\" in API group \"\" in the namespace \"pybox-test\".");
}

TEST_CASE("A 404 Status is engine_no_such_object")
{
    const auto error = status_error("GET /api/v1/namespaces/ns/pods/p", 404,
                                    R"({"kind":"Status","status":"Failure","message":"pods \"p\" not found","reason":"NotFound","code":404})");
    CHECK(error.code == "engine_no_such_object");
    CHECK(error.message == "GET /api/v1/namespaces/ns/pods/p: the apiserver answered 404 Not Found (NotFound): pods \"p\" not found.");
}

TEST_CASE("A 409 Status says whether the object exists already or changed")
{
    auto exists = parse_kube_status(
        R"({"kind":"Status","status":"Failure","message":"pods \"p\" already exists","reason":"AlreadyExists","details":{"name":"p","kind":"pods"},"code":409})");
    REQUIRE(exists.has_value());
    CHECK(exists->reason == "AlreadyExists");
    CHECK(exists->code == 409);
    CHECK_THAT(status_error("POST /x", 409, R"({"kind":"Status","status":"Failure","message":"m","reason":"Conflict"})").message,
               Catch::Contains("409 Conflict (Conflict): m"));
}

TEST_CASE("A 422 Status keeps its causes, and names them when it has no message")
{
    auto invalid = parse_kube_status(
        R"({"kind":"Status","status":"Failure","reason":"Invalid","code":422,"details":{"causes":[{"reason":"FieldValueRequired","message":"Required value","field":"spec.containers[0].image"},{"message":"bad"}]}})");
    REQUIRE(invalid.has_value());
    CHECK((invalid->causes == std::vector<std::string>{"spec.containers[0].image: Required value", "bad"}));
    CHECK(status_error("POST /p", 422, R"({"kind":"Status","status":"Failure","reason":"Invalid","details":{"causes":[{"field":"f","message":"m"}]}})")
              .message == "POST /p: the apiserver answered 422 Unprocessable Entity (Invalid): f: m.");
}

TEST_CASE("An error answer that is not a Status is quoted, printable and cut short")
{
    CHECK_FALSE(parse_kube_status("{}").has_value());
    CHECK_FALSE(parse_kube_status(R"({"kind":"Pod"})").has_value());
    CHECK_FALSE(parse_kube_status(R"({"kind":"Status","code":"403"})").has_value());
    CHECK_FALSE(parse_kube_status(R"({"kind":"Status","details":{"causes":{}}})").has_value());
    const auto error = status_error("GET /version", 502, "bad\ngateway" + std::string(500, 'x'));
    CHECK(error.code == "engine_error");
    CHECK_THAT(error.message, Catch::StartsWith("GET /version: the apiserver answered 502: bad?gateway"));
    CHECK(error.message.size() < 300);
}

TEST_CASE("A 401 says the apiserver does not accept the credentials")
{
    CHECK_THAT(status_error("GET /version", 401, R"({"kind":"Status","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401})")
                   .message,
               Catch::EndsWith("does not accept the kubeconfig's credentials."));
}
