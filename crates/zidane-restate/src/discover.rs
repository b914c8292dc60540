//! Finding the workers registered with a Restate server: a front given Restate's admin
//! API and no worker ids runs its tasks on every `zidane-worker` registered there.

use std::time::Duration;

use crate::error::RestateError;
use crate::protocol::worker_id_of;

/// How long the admin API may take to list its services.
const LIST_TIMEOUT: Duration = Duration::from_secs(10);

/// The ids of the workers registered with the Restate server whose admin API is at
/// `admin` (`http://host:9070`), sorted; empty when none is.
///
/// Errors: the admin API cannot be reached, answers an error, or answers what is not
/// its list of services.
pub async fn registered_workers(admin: &str) -> Result<Vec<String>, RestateError> {
    let target = format!("{}/services", admin.trim_end_matches('/'));
    let request = crate::ingress::http_client()?
        .get(&target)
        .timeout(LIST_TIMEOUT);
    let body = crate::ingress::exchange(request, &serde_json::Value::Null, &target).await?;
    worker_ids(&body).map_err(|cause| RestateError::Decode { target, cause })
}

/// The worker ids among the services of an admin API's `GET /services` answer.
fn worker_ids(body: &[u8]) -> Result<Vec<String>, serde_json::Error> {
    #[derive(serde::Deserialize)]
    struct Services {
        services: Vec<Service>,
    }
    #[derive(serde::Deserialize)]
    struct Service {
        name: String,
    }
    let services: Services = serde_json::from_slice(body)?;
    let mut ids: Vec<String> = services
        .services
        .iter()
        .filter_map(|service| worker_id_of(&service.name).map(str::to_owned))
        .filter(|id| crate::ids::validate_worker_id(id).is_ok())
        .collect();
    ids.sort();
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_workers_services_are_workers() {
        let body = serde_json::json!({
            "services": [
                { "name": "ZidaneWorker_w2", "ty": "VirtualObject" },
                { "name": "Greeter", "ty": "Service" },
                { "name": "ZidaneWorker_w1", "ty": "VirtualObject" },
                { "name": "ZidaneWorker_bad-id", "ty": "VirtualObject" },
            ]
        });
        let ids = worker_ids(&serde_json::to_vec(&body).unwrap()).unwrap();
        assert_eq!(ids, ["w1", "w2"]);
    }

    #[test]
    fn an_answer_that_is_not_a_service_list_is_an_error() {
        assert!(worker_ids(b"{\"deployments\": []}").is_err());
        assert!(worker_ids(b"not json").is_err());
    }
}
