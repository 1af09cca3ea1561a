#include "core/policy/tenantsource.h"

#include "core/fingerprint/fingerprint.h"
#include "core/policy/policy.h"

namespace idem::policy {

std::string tenantSourceOf(const nlohmann::json& document) {
  if (!document.is_object()) return {};
  if (auto it = document.find("tenant_from_authorization"); it != document.end() && it->is_boolean() && it->get<bool>())
    return "authorization digest";
  if (auto it = document.find("tenant_header");
      it != document.end() && it->is_string() && !it->get<std::string>().empty())
    return "header " + it->get<std::string>();
  if (auto it = document.find("single_tenant"); it != document.end() && it->is_boolean() && it->get<bool>())
    return "single tenant";
  return {};
}

std::string credentialTenant(std::string_view authorization) {
  return "cred_" + fp::toHex(fp::sha256(authorization)).substr(0, 32);
}

void setTenantSource(Policy& p, TenantSourceKind kind, const std::string& header) {
  for (const char* field :
       {"tenant_header", "tenant_from_authorization", "single_tenant", "tenant_required", "default_tenant"})
    p.document.erase(field);
  p.tenantFromAuthorization = false;
  p.defaultTenant.clear();
  switch (kind) {
    case TenantSourceKind::Header:
      p.tenantHeader = header;
      p.document["tenant_header"] = header;
      p.tenantRequired = true;
      break;
    case TenantSourceKind::Authorization:
      p.tenantHeader = "Authorization";
      p.tenantFromAuthorization = true;
      p.document["tenant_from_authorization"] = true;
      p.tenantRequired = true;
      break;
    case TenantSourceKind::Single:
      p.tenantHeader.clear();
      p.document["single_tenant"] = true;
      p.tenantRequired = false;
      break;
  }
}

}  // namespace idem::policy
