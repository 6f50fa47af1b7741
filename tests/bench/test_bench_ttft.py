"""`eko bench pipeline`'s time-to-first-token part, with a scripted streaming model."""

from __future__ import annotations

from rich.console import Console

from eko.config import Settings
from eko.llm.providers import Deltas, FunctionModel
from eko.llm.types import ProviderRequest
from eko_bench.bench_ttft import measure, table


async def test_first_token_comes_before_the_whole_reply() -> None:
    def answer(request: ProviderRequest) -> str | Deltas:
        if request.json_schema is not None:
            return "not json"
        return Deltas(("Une ", "réponse ", "lente ", "à ", "venir."), delay_s=0.05)

    result = await measure(
        Settings(_env_file=None),
        messages=2,
        providers=[FunctionModel(answer)],
    )
    assert result.warmup is not None and len(result.samples) == 2
    for sample in result.samples:
        assert sample.ttft_s is not None and sample.ttft_s < sample.total_s - 0.15
        assert sample.deltas == 5 and sample.chars == len("Une réponse lente à venir.")
    console = Console(record=True, width=120)
    console.print(table(result))
    assert "median" in console.export_text()
