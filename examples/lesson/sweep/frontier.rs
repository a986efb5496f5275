//! The Pareto frontier of cost pairs: the points no other point beats.

/// Whether `a` dominates `b`: no worse in every cost and better in at least one (lower is
/// better).
pub fn dominates(a: [i64; 2], b: [i64; 2]) -> bool {
    a[0] <= b[0] && a[1] <= b[1] && (a[0] < b[0] || a[1] < b[1])
}

/// For each point, whether it is on the frontier: no other point dominates it. Equal points
/// do not dominate each other, so ties on the frontier are all kept.
pub fn pareto_frontier(costs: &[[i64; 2]]) -> Vec<bool> {
    costs
        .iter()
        .map(|&point| !costs.iter().any(|&other| dominates(other, point)))
        .collect()
}
