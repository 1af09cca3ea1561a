#pragma once
// Where a request's tenant comes from (docs/store.md, "Tenants"): the tenant is part of every
// key's scope, so a deployment names its source — a header a trusted gateway sets, a digest of
// the request's own credentials, or an explicit declaration that it has one tenant — and the
// source is part of the recorded policy, so a start that would change it is noticed.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace idem::policy {

struct Policy;

/// The document's tenant source in words: "header X-Tenant-Id", "authorization digest",
/// "single tenant", or "" when the document declares none.
[[nodiscard]] std::string tenantSourceOf(const nlohmann::json& document);

/// The tenant for a request under tenant_from_authorization: "cred_" and 32 hex digits of the
/// SHA-256 of the Authorization header's value. Different credentials never share keys, and the
/// credential itself is never stored or logged.
[[nodiscard]] std::string credentialTenant(std::string_view authorization);

enum class TenantSourceKind { Header, Authorization, Single };
/// Sets the tenant source on the policy and in its document (so the recorded policy says it):
/// replaces whichever of tenant_header / tenant_from_authorization / single_tenant it had.
/// `header` is the header name for Header.
void setTenantSource(Policy& p, TenantSourceKind kind, const std::string& header = {});

}  // namespace idem::policy
