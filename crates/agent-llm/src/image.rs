//! Pictures in a conversation: [`ChatImage`] (a user's or a tool's picture, sent as an image part
//! of each wire format), how many tokens one costs by each provider's rule ([`ImageTokens`]),
//! and which models take pictures at all ([`supports_images`]). [`ChatImage::from_bytes`] is the
//! one place a file's bytes become a picture: every door (`--image`, `@picture.png`, HTTP, ACP,
//! `read_file`) goes through it, so the same types and the same size cap hold everywhere.

use std::sync::Arc;

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// A picture in a message.
///
/// The bytes travel base64-encoded (`data`), as every provider takes them; a picture whose
/// bytes were not loaded (`data: None`, a view built from a stored trace before its pictures
/// were read) is sent as a short text saying so, never as an empty image.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChatImage {
    /// What names it: the SHA-256 of its bytes where it is stored.
    pub id: String,
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub media_type: String,
    /// Its width in pixels.
    pub width: u32,
    /// Its height in pixels.
    pub height: u32,
    /// The name it was given (a file name), for people; the model is not told it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The bytes, base64-encoded (standard alphabet, padded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Arc<str>>,
}

impl ChatImage {
    /// A picture whose bytes are known.
    pub fn new(
        id: impl Into<String>,
        media_type: impl Into<String>,
        (width, height): (u32, u32),
        data: Arc<str>,
    ) -> Self {
        Self {
            id: id.into(),
            media_type: media_type.into(),
            width,
            height,
            name: None,
            data: Some(data),
        }
    }

    /// A picture from a file's bytes: PNG, JPEG, GIF or WebP, at most [`MAX_IMAGE_BYTES`]. Its
    /// id is the SHA-256 of the bytes (hex), its size is read from its header.
    ///
    /// ```
    /// use agent_llm::ChatImage;
    /// // A 1×1 GIF.
    /// let gif = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;";
    /// let image = ChatImage::from_bytes(gif, Some("dot.gif")).unwrap();
    /// assert_eq!((image.media_type.as_str(), image.width, image.height), ("image/gif", 1, 1));
    /// assert_eq!(image.placeholder(), "[image: dot.gif 1×1]");
    /// assert!(ChatImage::from_bytes(b"plain text", None).is_err());
    /// ```
    pub fn from_bytes(bytes: &[u8], name: Option<&str>) -> Result<Self, ImageError> {
        if bytes.len() > MAX_IMAGE_BYTES {
            return Err(ImageError::TooLarge { bytes: bytes.len() });
        }
        let media_type = media_type(bytes).ok_or(ImageError::NotAPicture)?;
        let size = imagesize::blob_size(bytes).map_err(|_| ImageError::NotAPicture)?;
        let side = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        let id = Sha256::digest(bytes)
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect::<String>();
        let data: Arc<str> = base64::engine::general_purpose::STANDARD
            .encode(bytes)
            .into();
        let mut image = Self::new(id, media_type, (side(size.width), side(size.height)), data);
        image.name = name.map(str::to_owned);
        Ok(image)
    }

    /// A picture sent as base64 (an editor's ACP `image` block, an HTTP body): decoded, then
    /// read as [`from_bytes`](Self::from_bytes) reads a file, whatever type the sender named.
    pub fn from_base64(data: &str, name: Option<&str>) -> Result<Self, ImageError> {
        if data.len() > MAX_IMAGE_BYTES / 3 * 4 + 4 {
            return Err(ImageError::TooLarge {
                bytes: data.len() / 4 * 3,
            });
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map_err(|_| ImageError::NotBase64)?;
        Self::from_bytes(&bytes, name)
    }

    /// True when `id` has the form of a picture's id, the SHA-256 of its bytes: 64 lowercase hex
    /// digits (so also a safe file name).
    ///
    /// ```
    /// use agent_llm::ChatImage;
    /// assert!(ChatImage::is_id(&"0a".repeat(32)));
    /// assert!(!ChatImage::is_id("../meta.json"));
    /// assert!(!ChatImage::is_id(&"0A".repeat(32)));
    /// ```
    pub fn is_id(id: &str) -> bool {
        id.len() == 64 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    }

    /// What a terminal or a log shows in place of the picture: `[image: name.png 120×80]`.
    pub fn placeholder(&self) -> String {
        let name = self.name.as_deref().unwrap_or(&self.media_type);
        format!("[image: {name} {}×{}]", self.width, self.height)
    }

    /// The same picture as a `data:` URL, the form OpenAI's formats take; `None` without bytes.
    pub fn data_url(&self) -> Option<String> {
        let data = self.data.as_deref()?;
        Some(format!("data:{};base64,{data}", self.media_type))
    }

    /// The text sent in place of a picture whose bytes are not at hand.
    pub fn missing_text(&self) -> String {
        format!(
            "[a {}×{} picture ({}) that could not be loaded]",
            self.width, self.height, self.media_type
        )
    }
}

/// The largest picture sent, in bytes: Anthropic's limit for one image (OpenAI's is larger), so
/// a picture is refused here, clearly, rather than by the provider with a 400.
pub const MAX_IMAGE_BYTES: usize = 5 * 1024 * 1024;

/// Why bytes could not become a [`ChatImage`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    /// Not a PNG, JPEG, GIF or WebP picture (or one whose header is broken).
    #[error("not a PNG, JPEG, GIF or WebP picture")]
    NotAPicture,
    /// Sent as base64 that does not decode.
    #[error("the picture's data is not base64")]
    NotBase64,
    /// Larger than [`MAX_IMAGE_BYTES`].
    #[error("the picture is {bytes} bytes, more than the {MAX_IMAGE_BYTES} a model is sent")]
    TooLarge {
        /// Its size.
        bytes: usize,
    },
}

/// The media type of a picture a model can be shown, from its first bytes: PNG, JPEG, GIF or
/// WebP; `None` for anything else.
pub fn media_type(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some("image/png")
    } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        Some("image/jpeg")
    } else if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
        Some("image/gif")
    } else if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        Some("image/webp")
    } else {
        None
    }
}

/// How a provider counts a picture's tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ImageTokens {
    /// OpenAI (high detail): scaled to fit 2048×2048, then its short side to 768; 85 tokens
    /// plus 170 per 512-pixel tile.
    OpenAi,
    /// OpenAI's smaller models (`gpt-4.1-mini`, `-nano`, `o4-mini`, `gpt-5-mini`, `-nano`):
    /// 32-pixel patches, at most 1,536, times the model's multiplier (in thousandths).
    OpenAiPatches {
        /// The multiplier, in thousandths (1,620 for a mini model).
        per_mille: u16,
    },
    /// Anthropic: scaled to a long side of at most 1,568 pixels and about 1.15 megapixels;
    /// width × height / 750 tokens. The larger of the two for most pictures, so the default
    /// where the provider is not known.
    #[default]
    Anthropic,
}

impl ImageTokens {
    /// The rule of the provider that serves `model` (after any `provider/` prefix), by its name:
    /// OpenAI's GPT and o-series models count tiles (their smaller models patches), every other
    /// model (Claude, and local ones, whose real count is their server's) the larger
    /// [`Anthropic`](Self::Anthropic) rule.
    ///
    /// ```
    /// use agent_llm::ImageTokens;
    /// assert_eq!(ImageTokens::for_model("gpt-4o"), ImageTokens::OpenAi);
    /// assert_eq!(ImageTokens::for_model("openai/o3"), ImageTokens::OpenAi);
    /// assert_eq!(ImageTokens::for_model("claude-sonnet-4-5"), ImageTokens::Anthropic);
    /// assert_eq!(ImageTokens::for_model("qwen2.5-vl-7b"), ImageTokens::Anthropic);
    /// assert_eq!(
    ///     ImageTokens::for_model("gpt-4.1-mini"),
    ///     ImageTokens::OpenAiPatches { per_mille: 1_620 }
    /// );
    /// // 1024×1024 is 32 × 32 patches.
    /// assert_eq!(ImageTokens::for_model("gpt-4.1-mini").estimate(1024, 1024), 1_659);
    /// ```
    pub fn for_model(model: &str) -> Self {
        let name = model
            .rsplit('/')
            .next()
            .unwrap_or(model)
            .to_ascii_lowercase();
        let patches = [
            ("gpt-4.1-mini", 1_620),
            ("gpt-4.1-nano", 2_460),
            ("gpt-5-mini", 1_620),
            ("gpt-5-nano", 2_460),
            ("o4-mini", 1_720),
        ];
        if let Some(&(_, per_mille)) = patches.iter().find(|(p, _)| name.starts_with(p)) {
            return Self::OpenAiPatches { per_mille };
        }
        let openai = ["gpt-", "chatgpt-", "o1", "o3", "o4"];
        if openai.iter().any(|prefix| name.starts_with(prefix)) {
            Self::OpenAi
        } else {
            Self::Anthropic
        }
    }

    /// The tokens a `width` × `height` picture costs.
    ///
    /// ```
    /// use agent_llm::ImageTokens;
    /// assert_eq!(ImageTokens::OpenAi.estimate(1024, 1024), 765);
    /// assert_eq!(ImageTokens::OpenAi.estimate(512, 512), 255);
    /// assert_eq!(ImageTokens::Anthropic.estimate(1000, 750), 1000);
    /// assert!(ImageTokens::Anthropic.estimate(4000, 3000) <= 1600);
    /// ```
    pub fn estimate(self, width: u32, height: u32) -> usize {
        let (mut w, mut h) = (f64::from(width.max(1)), f64::from(height.max(1)));
        match self {
            Self::OpenAi => {
                let fit = (2048.0 / w.max(h)).min(1.0);
                (w, h) = (w * fit, h * fit);
                let short = (768.0 / w.min(h)).min(1.0);
                (w, h) = (w * short, h * short);
                let tiles = (w / 512.0).ceil() * (h / 512.0).ceil();
                85 + 170 * tiles as usize
            }
            Self::OpenAiPatches { per_mille } => {
                let patches = ((w / 32.0).ceil() * (h / 32.0).ceil()).min(1_536.0);
                (patches * f64::from(per_mille) / 1_000.0).ceil() as usize
            }
            Self::Anthropic => {
                let long = (1568.0 / w.max(h)).min(1.0);
                (w, h) = (w * long, h * long);
                let area = (1_150_000.0 / (w * h)).sqrt().min(1.0);
                (w, h) = (w * area, h * area);
                ((w * h) / 750.0).ceil() as usize
            }
        }
    }
}

/// Model names (after any `provider/` prefix) that take pictures, by the start of the name.
const VISION_PREFIXES: &[&str] = &[
    "gpt-4o",
    "chatgpt-4o",
    "gpt-4.1",
    "gpt-4.5",
    "gpt-4-turbo",
    "gpt-4-vision",
    "gpt-5",
    "o1",
    "o3",
    "o4",
    "claude-3",
    "claude-sonnet-4",
    "claude-opus-4",
    "claude-haiku-4",
    "claude-4",
    "gemini",
    "gemma-3",
    "gemma3",
    "llama-4",
    "llama4",
    "pixtral",
    "llava",
    "bakllava",
    "moondream",
    "minicpm-v",
    "internvl",
    "mistral-small-3.1",
    "mistral-small-3.2",
    "mistral-medium-3",
    "grok-4",
    "glm-4v",
    "glm-4.5v",
    "kimi-vl",
    "qvq",
];
/// Parts of a name that mark a model that takes pictures.
const VISION_MARKS: &[&str] = &["vision", "-vl", "_vl", "llava", "multimodal", "omni"];
/// Names that start like a model that takes pictures but do not.
const NO_VISION: &[&str] = &[
    "o1-mini",
    "o1-preview",
    "o3-mini",
    "gpt-4o-audio",
    "gpt-4o-realtime",
    "gpt-4o-mini-audio",
    "gpt-4o-mini-realtime",
    "gpt-4o-transcribe",
    "gpt-4o-mini-transcribe",
    "gpt-4o-mini-tts",
];

/// Whether `model` takes pictures, by its name: OpenAI's GPT-4o, 4.1, 5 and o-series (not the
/// minis of o1 and o3), Claude 3 and later, Gemini, and open models whose names say so (LLaVA,
/// Qwen-VL, Pixtral, Gemma 3, Llama 4, ...). An unknown model (most local models) does not: a
/// picture sent to a server that cannot read it is refused with a 400, so the runner refuses
/// it first, clearly, unless the user says the model takes pictures.
///
/// ```
/// use agent_llm::supports_images;
/// assert!(supports_images("gpt-4o-mini"));
/// assert!(supports_images("anthropic/claude-sonnet-4-5"));
/// assert!(supports_images("Qwen2.5-VL-7B-Instruct"));
/// assert!(!supports_images("o3-mini"));
/// assert!(!supports_images("deepseek-chat"));
/// assert!(!supports_images("qwen2.5-coder-7b"));
/// ```
pub fn supports_images(model: &str) -> bool {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    if NO_VISION.iter().any(|prefix| name.starts_with(prefix)) {
        return false;
    }
    VISION_PREFIXES
        .iter()
        .any(|prefix| name.starts_with(prefix))
        || VISION_MARKS.iter().any(|mark| name.contains(mark))
}

/// Which models take pictures: [`supports_images`]'s rule by name, with the settings' word on
/// top (agent.toml's `[models."NAME"] vision = true/false`).
///
/// ```
/// use agent_llm::Vision;
/// let vision = Vision::new([("my-local-vl".to_owned(), false), ("qwen-coder".to_owned(), true)]);
/// assert!(vision.takes_images("gpt-4o"));
/// assert!(!vision.takes_images("my-local-vl"));
/// assert!(vision.takes_images("qwen-coder"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Vision {
    settings: std::collections::BTreeMap<String, bool>,
}

impl Vision {
    /// The rule with `settings` (model name, takes pictures) on top of the names'.
    pub fn new(settings: impl IntoIterator<Item = (String, bool)>) -> Self {
        Self {
            settings: settings.into_iter().collect(),
        }
    }

    /// Whether `model` takes pictures.
    pub fn takes_images(&self, model: &str) -> bool {
        self.settings
            .get(model)
            .copied()
            .unwrap_or_else(|| supports_images(model))
    }

    /// Whether `images` may be sent to `model`: an error saying why not (and how to say the
    /// model takes them) when there are some and it takes none.
    pub fn check(&self, model: &str, images: &[ChatImage]) -> Result<(), String> {
        if images.is_empty() || self.takes_images(model) {
            return Ok(());
        }
        Err(format!(
            "the model {model} does not take images; choose a model that does, or set \
             `vision = true` under [models.\"{model}\"] in agent.toml if it does"
        ))
    }
}
