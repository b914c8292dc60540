//! Which worker runs a start that names labels: among the workers carrying every one of
//! them, the least loaded first; none carrying them is a refusal naming what the
//! workers carry, so the model can choose again.

use crate::protocol::WorkerInfo;

/// The workers to try for a start wanting `wanted`, best first: those whose labels hold
/// every wanted one, fewest running tasks first, ties in turn from `rotation`.
/// `described` holds, per worker index, its id and its answer (`None`: it did not
/// answer, and it is not tried). `Err`: no worker fits, with what each one carries, for
/// the refusal.
pub(crate) fn order(
    described: &[(String, Option<WorkerInfo>)],
    wanted: &[String],
    rotation: usize,
) -> Result<Vec<usize>, String> {
    let count = described.len().max(1);
    let mut fitting: Vec<(usize, usize)> = described
        .iter()
        .enumerate()
        .filter_map(|(index, (_, info))| {
            let info = info.as_ref().filter(|info| !info.draining)?;
            wanted
                .iter()
                .all(|label| info.labels.contains(label))
                .then_some((index, info.running))
        })
        .collect();
    if fitting.is_empty() {
        return Err(carried(described));
    }
    fitting.sort_by_key(|&(index, running)| (running, (index + count - rotation % count) % count));
    Ok(fitting.into_iter().map(|(index, _)| index).collect())
}

/// What each worker carries, as the refusal says it: `w1: linux; w2: gpu, linux; w3:
/// did not answer`.
fn carried(described: &[(String, Option<WorkerInfo>)]) -> String {
    let each: Vec<String> = described
        .iter()
        .map(|(id, info)| match info {
            Some(info) if info.draining => format!("{id}: draining"),
            Some(info) if info.labels.is_empty() => format!("{id}: no labels"),
            Some(info) => format!("{id}: {}", info.labels.join(", ")),
            None => format!("{id}: did not answer"),
        })
        .collect();
    format!("the workers carry {}", each.join("; "))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn worker(id: &str, labels: &[&str], running: usize) -> (String, Option<WorkerInfo>) {
        (
            id.to_owned(),
            Some(WorkerInfo {
                labels: labels.iter().map(|l| (*l).to_owned()).collect(),
                running,
                draining: false,
            }),
        )
    }

    fn wanted(labels: &[&str]) -> Vec<String> {
        labels.iter().map(|l| (*l).to_owned()).collect()
    }

    #[test]
    fn only_workers_with_every_label_fit_the_least_loaded_first() {
        let described = [
            worker("w1", &["linux"], 0),
            worker("w2", &["gpu", "linux"], 3),
            worker("w3", &["gpu", "linux"], 1),
        ];
        assert_eq!(order(&described, &wanted(&["gpu"]), 0), Ok(vec![2, 1]));
        assert_eq!(
            order(&described, &wanted(&["linux", "gpu"]), 0),
            Ok(vec![2, 1])
        );
        assert_eq!(order(&described, &wanted(&["linux"]), 0), Ok(vec![0, 2, 1]));
    }

    #[test]
    fn no_fitting_worker_names_what_each_carries() {
        let described = [
            worker("w1", &["linux"], 0),
            worker("w2", &[], 0),
            ("w3".to_owned(), None),
        ];
        assert_eq!(
            order(&described, &wanted(&["gpu"]), 0),
            Err("the workers carry w1: linux; w2: no labels; w3: did not answer".to_owned())
        );
    }

    #[test]
    fn a_draining_worker_is_never_tried_and_said_so() {
        let mut draining = worker("w1", &["gpu"], 0);
        if let Some(info) = draining.1.as_mut() {
            info.draining = true;
        }
        let described = [draining.clone(), worker("w2", &["gpu"], 9)];
        assert_eq!(order(&described, &wanted(&["gpu"]), 0), Ok(vec![1]));
        assert_eq!(
            order(&[draining], &wanted(&["gpu"]), 0),
            Err("the workers carry w1: draining".to_owned())
        );
    }

    #[test]
    fn a_worker_that_did_not_answer_is_never_tried() {
        let described = [("w1".to_owned(), None), worker("w2", &["gpu"], 5)];
        assert_eq!(order(&described, &wanted(&["gpu"]), 0), Ok(vec![1]));
    }

    #[test]
    fn equal_loads_take_turns() {
        let described = [worker("w1", &["a"], 0), worker("w2", &["a"], 0)];
        assert_eq!(order(&described, &wanted(&["a"]), 0), Ok(vec![0, 1]));
        assert_eq!(order(&described, &wanted(&["a"]), 1), Ok(vec![1, 0]));
    }

    proptest! {
        /// Whatever the workers carry and run: every worker tried carries every wanted
        /// label and answered, every such worker is tried once, loads never decrease
        /// along the order, and a refusal happens exactly when none fits.
        #[test]
        fn the_order_is_the_fitting_workers_by_load(
            workers in proptest::collection::vec(
                proptest::option::of((proptest::collection::vec(0u8..4, 0..4), 0usize..5)),
                0..8,
            ),
            want in proptest::collection::vec(0u8..4, 0..3),
            rotation in 0usize..10,
        ) {
            let name = |n: u8| format!("l{n}");
            let described: Vec<(String, Option<WorkerInfo>)> = workers
                .iter()
                .enumerate()
                .map(|(i, info)| {
                    (
                        format!("w{i}"),
                        info.as_ref().map(|(labels, running)| WorkerInfo {
                            labels: labels.iter().copied().map(name).collect(),
                            running: *running,
                            draining: false,
                        }),
                    )
                })
                .collect();
            let wanted: Vec<String> = want.iter().copied().map(name).collect();
            let fits = |info: &Option<WorkerInfo>| {
                info.as_ref().is_some_and(|info| wanted.iter().all(|l| info.labels.contains(l)))
            };
            let fitting = described.iter().filter(|(_, info)| fits(info)).count();
            match order(&described, &wanted, rotation) {
                Ok(order) => {
                    prop_assert_eq!(order.len(), fitting);
                    let mut seen = std::collections::BTreeSet::new();
                    for &index in &order {
                        prop_assert!(fits(&described[index].1));
                        prop_assert!(seen.insert(index));
                    }
                    let loads: Vec<usize> = order
                        .iter()
                        .map(|&i| described[i].1.as_ref().map_or(0, |info| info.running))
                        .collect();
                    prop_assert!(loads.windows(2).all(|pair| pair[0] <= pair[1]));
                }
                Err(refusal) => {
                    prop_assert_eq!(fitting, 0);
                    for (id, _) in &described {
                        prop_assert!(refusal.contains(id.as_str()));
                    }
                }
            }
        }
    }
}
