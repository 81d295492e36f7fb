//! Images for the model: a screenshot or a diagram the person attaches
//! (`@shot.png`, a pasted path, `lathe exec --image`), measured, and
//! downscaled to what the providers document (Anthropic: at most 1,568
//! pixels on the long edge and about 1.15 megapixels, 5 MB encoded;
//! OpenAI's high detail fits 2,048 then 768 on the short side: the
//! smaller of the two serves both), then sent as base64 on every wire.
//! PNG, JPEG, GIF (its first frame) and WebP are taken, by their bytes,
//! not their names.

use std::io::Cursor;

use base64::Engine;
use image::{GenericImageView, ImageFormat, ImageReader};

/// The longest edge sent, in pixels.
pub const MAX_EDGE: u32 = 1_568;
/// The most pixels sent.
pub const MAX_PIXELS: u64 = 1_150_000;
/// The most bytes of one image sent (5 MB of base64).
pub const MAX_BYTES: usize = 3_750_000;
/// The most bytes of one image read.
pub const MAX_FILE: u64 = 40 * 1024 * 1024;

/// An image ready to send.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Image {
    /// What the person called it (a file name).
    pub name: String,
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub media_type: String,
    /// The encoded image, base64.
    pub data: String,
    pub width: u32,
    pub height: u32,
}

impl Image {
    /// `[image shot.png 1280×720]`, as the transcript shows it.
    pub fn label(&self) -> String {
        format!("[image {} {}×{}]", self.name, self.width, self.height)
    }

    /// A `data:` URL of it, written without copying the data twice.
    pub fn data_url(&self) -> DataUrl<'_> {
        DataUrl(self)
    }
}

/// `data:image/png;base64,…`, serialized straight from the image.
pub struct DataUrl<'a>(&'a Image);

impl std::fmt::Display for DataUrl<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "data:{};base64,{}", self.0.media_type, self.0.data)
    }
}

impl serde::Serialize for DataUrl<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageError {
    #[error("not an image the models take (PNG, JPEG, GIF or WebP)")]
    NotAnImage,
    #[error("the image cannot be read: {0}")]
    Unreadable(String),
    #[error("the image is larger than {} MiB", MAX_FILE >> 20)]
    TooLarge,
}

/// The format of `bytes`, if it is one the models take.
pub fn sniff(bytes: &[u8]) -> Option<ImageFormat> {
    match image::guess_format(bytes).ok()? {
        f @ (ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::Gif | ImageFormat::WebP) => {
            Some(f)
        }
        _ => None,
    }
}

/// The size that fits both limits, keeping the proportions.
fn fitted(width: u32, height: u32) -> (u32, u32) {
    let edge = f64::from(MAX_EDGE) / f64::from(width.max(height).max(1));
    let area = (MAX_PIXELS as f64 / (f64::from(width.max(1)) * f64::from(height.max(1)))).sqrt();
    let scale = edge.min(area).min(1.0);
    let side = |n: u32| {
        ((f64::from(n) * scale).round().max(1.0) as u32)
            .min(MAX_EDGE)
            .min(n)
    };
    let (w, mut h) = (side(width), side(height));
    // Rounding may not pass the pixel limit.
    while u64::from(w) * u64::from(h) > MAX_PIXELS && h > 1 {
        h -= 1;
    }
    (w, h)
}

/// Reads `bytes` as an image named `name`: decoded, scaled down to the
/// limits, and encoded again (JPEG for photos, PNG for the rest), which
/// leaves out the metadata a file carries (EXIF, the place a photo was
/// taken).
pub fn prepare(name: &str, bytes: &[u8]) -> Result<Image, ImageError> {
    if bytes.len() as u64 > MAX_FILE {
        return Err(ImageError::TooLarge);
    }
    let format = sniff(bytes).ok_or(ImageError::NotAnImage)?;
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    // A small file that claims a huge picture is refused, not allocated.
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(20_000);
    limits.max_image_height = Some(20_000);
    limits.max_alloc = Some(128 * 1024 * 1024);
    reader.limits(limits.clone());
    let (width, height) = reader
        .into_dimensions()
        .map_err(|e| ImageError::Unreadable(e.to_string()))?;
    let engine = base64::engine::general_purpose::STANDARD;
    let (w, h) = fitted(width, height);
    // Always decoded and encoded again: what goes is the picture, not
    // what the file carries besides (a photo's place and camera).
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    reader.limits(limits);
    let picture = reader
        .decode()
        .map_err(|e| ImageError::Unreadable(e.to_string()))?;
    let picture = if (w, h) == picture.dimensions() {
        picture
    } else {
        picture.resize_exact(w, h, image::imageops::FilterType::Triangle)
    };
    let photo = matches!(format, ImageFormat::Jpeg | ImageFormat::WebP);
    let encode = |as_jpeg: bool, quality: u8| -> Result<Vec<u8>, ImageError> {
        let mut out = Vec::new();
        let result = if as_jpeg {
            let rgb = image::DynamicImage::ImageRgb8(picture.to_rgb8());
            rgb.write_with_encoder(image::codecs::jpeg::JpegEncoder::new_with_quality(
                &mut out, quality,
            ))
        } else {
            picture.write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
        };
        result.map_err(|e| ImageError::Unreadable(e.to_string()))?;
        Ok(out)
    };
    let mut jpeg = photo;
    let mut out = encode(jpeg, 85)?;
    if out.len() > MAX_BYTES && !jpeg {
        jpeg = true;
        out = encode(true, 85)?;
    }
    if out.len() > MAX_BYTES {
        out = encode(true, 60)?;
    }
    Ok(Image {
        name: name.to_string(),
        media_type: if jpeg { "image/jpeg" } else { "image/png" }.into(),
        data: engine.encode(&out),
        width: w,
        height: h,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crc32(bytes: &[u8]) -> u32 {
        let mut c = !0u32;
        for b in bytes {
            c ^= u32::from(*b);
            for _ in 0..8 {
                c = if c & 1 == 1 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
        }
        !c
    }

    fn png(width: u32, height: u32) -> Vec<u8> {
        let img = image::RgbImage::from_fn(width, height, |x, y| {
            image::Rgb([(x % 256) as u8, (y % 256) as u8, 128])
        });
        let mut out = Vec::new();
        image::DynamicImage::ImageRgb8(img)
            .write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
            .unwrap();
        out
    }

    #[test]
    fn a_small_image_keeps_its_size_and_loses_its_metadata() {
        let mut bytes = png(640, 360);
        // A text chunk (where a file keeps what it says of itself), put
        // before the image data.
        let chunk = b"tEXtComment\0taken at 51.5N 0.1W";
        let mut text = (chunk.len() as u32 - 4).to_be_bytes().to_vec();
        text.extend_from_slice(chunk);
        text.extend_from_slice(&crc32(chunk).to_be_bytes());
        bytes.splice(33..33, text);
        let img = prepare("shot.png", &bytes).unwrap();
        assert_eq!((img.width, img.height), (640, 360));
        assert_eq!(img.media_type, "image/png");
        let engine = base64::engine::general_purpose::STANDARD;
        let sent = engine.decode(&img.data).unwrap();
        assert!(!String::from_utf8_lossy(&sent).contains("51.5N"));
        assert_eq!(
            image::load_from_memory(&sent).unwrap().dimensions(),
            (640, 360)
        );
        assert_eq!(img.label(), "[image shot.png 640×360]");
        assert!(
            img.data_url()
                .to_string()
                .starts_with("data:image/png;base64,iVBOR")
        );
    }

    #[test]
    fn a_large_image_is_scaled_to_the_limits() {
        let img = prepare("big.png", &png(3000, 1500)).unwrap();
        assert!(img.width <= MAX_EDGE && img.height <= MAX_EDGE);
        assert!(u64::from(img.width) * u64::from(img.height) <= MAX_PIXELS);
        // Proportions kept.
        let ratio = f64::from(img.width) / f64::from(img.height);
        assert!((ratio - 2.0).abs() < 0.01, "{ratio}");
        let engine = base64::engine::general_purpose::STANDARD;
        let back = engine.decode(&img.data).unwrap();
        assert_eq!(
            image::load_from_memory(&back).unwrap().dimensions(),
            (img.width, img.height)
        );
    }

    #[test]
    fn what_is_not_an_image_is_refused_whatever_its_name() {
        assert_eq!(
            prepare("key.png", b"-----BEGIN OPENSSH PRIVATE KEY-----"),
            Err(ImageError::NotAnImage)
        );
        // A PNG header that lies about a huge size: refused, not
        // allocated.
        let mut bomb = png(1, 1);
        bomb[16..20].copy_from_slice(&100_000u32.to_be_bytes());
        bomb[20..24].copy_from_slice(&100_000u32.to_be_bytes());
        assert!(matches!(
            prepare("bomb.png", &bomb),
            Err(ImageError::Unreadable(_))
        ));
    }

    mod properties {
        use proptest::prelude::*;

        use super::*;

        /// Files that start as images do and go on with anything: real
        /// images cut short or with their bytes changed, and headers that
        /// claim huge pictures.
        fn file() -> impl Strategy<Value = Vec<u8>> {
            let real = png(24, 16);
            prop_oneof![
                proptest::collection::vec(any::<u8>(), 0..64),
                (0..real.len(), any::<u8>(), 0..real.len()).prop_map(move |(i, b, cut)| {
                    let mut f = real.clone();
                    f[i] = b;
                    f.truncate(cut.max(8));
                    f
                }),
                proptest::sample::select(vec![
                    b"\x89PNG\r\n\x1a\n".to_vec(),
                    b"\xff\xd8\xff".to_vec(),
                    b"GIF89a".to_vec(),
                    b"RIFF\0\0\0\0WEBPVP8 ".to_vec(),
                ])
                .prop_flat_map(|head| {
                    proptest::collection::vec(any::<u8>(), 0..200).prop_map(move |tail| {
                        let mut f = head.clone();
                        f.extend(tail);
                        f
                    })
                }),
            ]
        }

        proptest! {
            #![proptest_config(crate::props::config(128))]

            /// Whatever a file holds: no panic, and what is sent fits the
            /// limits.
            #[test]
            fn any_file_is_an_image_within_the_limits_or_refused(bytes in file()) {
                let _ = sniff(&bytes);
                if let Ok(image) = prepare("x.png", &bytes) {
                    prop_assert!(image.width <= MAX_EDGE && image.height <= MAX_EDGE);
                    prop_assert!(u64::from(image.width) * u64::from(image.height) <= MAX_PIXELS);
                }
            }
        }
    }
}
