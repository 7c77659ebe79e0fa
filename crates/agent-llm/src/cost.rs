//! What a model call costs, from a per-model price table that users extend.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::types::Usage;

/// The price of one model in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ModelPrice {
    /// Dollars per million uncached input tokens.
    pub input_per_mtok: f64,
    /// Dollars per million output tokens.
    pub output_per_mtok: f64,
    /// Dollars per million input tokens read from the prompt cache; the input price when
    /// `None`.
    #[serde(default)]
    pub cached_input_per_mtok: Option<f64>,
}

impl ModelPrice {
    /// A price without a separate cached-input rate.
    pub fn new(input_per_mtok: f64, output_per_mtok: f64) -> Self {
        ModelPrice {
            input_per_mtok,
            output_per_mtok,
            cached_input_per_mtok: None,
        }
    }

    /// The same price with a cached-input rate.
    #[must_use]
    pub fn with_cached(self, cached_input_per_mtok: f64) -> Self {
        ModelPrice {
            cached_input_per_mtok: Some(cached_input_per_mtok),
            ..self
        }
    }

    /// The dollars `usage` costs at this price.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let cached = usage.cached_tokens.min(usage.prompt_tokens);
        let uncached = usage.prompt_tokens - cached;
        let cached_rate = self.cached_input_per_mtok.unwrap_or(self.input_per_mtok);
        (uncached as f64 * self.input_per_mtok
            + cached as f64 * cached_rate
            + usage.completion_tokens as f64 * self.output_per_mtok)
            / 1_000_000.0
    }
}

/// List prices of common models (dollars per million tokens: input, output, cached input).
/// Prices change; users override entries with [`PriceTable::insert`].
const DEFAULT_PRICES: &[(&str, f64, f64, f64)] = &[
    ("gpt-4o", 2.50, 10.00, 1.25),
    ("gpt-4o-mini", 0.15, 0.60, 0.075),
    ("gpt-4.1", 2.00, 8.00, 0.50),
    ("gpt-4.1-mini", 0.40, 1.60, 0.10),
    ("gpt-4.1-nano", 0.10, 0.40, 0.025),
    ("gpt-5", 1.25, 10.00, 0.125),
    ("gpt-5-mini", 0.25, 2.00, 0.025),
    ("gpt-5-nano", 0.05, 0.40, 0.005),
    ("o3", 2.00, 8.00, 0.50),
    ("o4-mini", 1.10, 4.40, 0.275),
    ("claude-opus-4", 15.00, 75.00, 1.50),
    ("claude-opus-4-5", 5.00, 25.00, 0.50),
    ("claude-sonnet-4", 3.00, 15.00, 0.30),
    ("claude-3-7-sonnet", 3.00, 15.00, 0.30),
    ("claude-3-5-haiku", 0.80, 4.00, 0.08),
    ("claude-haiku-4-5", 1.00, 5.00, 0.10),
    ("deepseek-chat", 0.27, 1.10, 0.07),
    ("deepseek-reasoner", 0.55, 2.19, 0.14),
];

/// Prices by model name.
///
/// A model is found by exact name first, then by the longest entry that is a prefix of its
/// name (so `gpt-4o-2024-08-06` costs what `gpt-4o` costs), ignoring a `provider/` prefix.
/// Unknown models (local ones, say) cost nothing.
///
/// ```
/// use agent_llm::{ModelPrice, PriceTable, Usage};
/// let mut prices = PriceTable::default();
/// prices.insert("my-local-model", ModelPrice::new(1.0, 2.0));
/// let cost = prices.cost("my-local-model", &Usage::new(1_000_000, 500_000));
/// assert!((cost - 2.0).abs() < 1e-9);
/// assert_eq!(prices.cost("unknown", &Usage::new(10, 10)), 0.0);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PriceTable {
    prices: BTreeMap<String, ModelPrice>,
}

impl Default for PriceTable {
    /// The built-in list prices.
    fn default() -> Self {
        let prices = DEFAULT_PRICES
            .iter()
            .map(|&(name, input, output, cached)| {
                (
                    name.to_string(),
                    ModelPrice::new(input, output).with_cached(cached),
                )
            })
            .collect();
        PriceTable { prices }
    }
}

impl PriceTable {
    /// A table with no prices at all.
    pub fn empty() -> Self {
        PriceTable {
            prices: BTreeMap::new(),
        }
    }

    /// Sets the price of `model` (or of every model whose name starts with it).
    pub fn insert(&mut self, model: impl Into<String>, price: ModelPrice) {
        self.prices.insert(model.into(), price);
    }

    /// Adds or replaces every entry of `other`.
    pub fn extend(&mut self, other: PriceTable) {
        self.prices.extend(other.prices);
    }

    /// Reads a table from JSON: `{"model-name": {"input_per_mtok": 1.0, "output_per_mtok":
    /// 2.0, "cached_input_per_mtok": 0.1}}`.
    pub fn from_json(json: &str) -> Result<PriceTable, serde_json::Error> {
        serde_json::from_str(json)
    }

    /// The price of `model`, if known.
    pub fn price(&self, model: &str) -> Option<&ModelPrice> {
        let name = model.rsplit('/').next().unwrap_or(model);
        if let Some(price) = self.prices.get(model).or_else(|| self.prices.get(name)) {
            return Some(price);
        }
        self.prices
            .iter()
            .filter(|(prefix, _)| name.starts_with(prefix.as_str()))
            .max_by_key(|(prefix, _)| prefix.len())
            .map(|(_, price)| price)
    }

    /// The dollars `usage` of `model` costs; 0 for models without a price.
    pub fn cost(&self, model: &str, usage: &Usage) -> f64 {
        self.price(model).map_or(0.0, |price| price.cost(usage))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_and_cache_discounts_apply() {
        let prices = PriceTable::default();
        let usage = Usage {
            prompt_tokens: 1_000_000,
            completion_tokens: 0,
            cached_tokens: 500_000,
            estimated: false,
        };
        let cost = prices.cost("openai/gpt-4o-2024-08-06", &usage);
        assert!((cost - (1.25 + 0.625)).abs() < 1e-9, "{cost}");
        let mini = prices.cost("gpt-4o-mini", &Usage::new(1_000_000, 1_000_000));
        assert!((mini - 0.75).abs() < 1e-9, "{mini}");
    }

    #[test]
    fn tables_load_from_json_and_extend() {
        let mut prices = PriceTable::empty();
        prices.extend(
            PriceTable::from_json(r#"{"m": {"input_per_mtok": 2.0, "output_per_mtok": 4.0}}"#)
                .unwrap(),
        );
        assert!((prices.cost("m", &Usage::new(500_000, 250_000)) - 2.0).abs() < 1e-9);
    }
}
