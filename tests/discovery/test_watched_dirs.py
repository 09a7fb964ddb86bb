"""Which folders are watched for each discovery pattern, and which events in them matter (pure:
a fake file system of folders)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from aai_gateway.discovery.sources import Pattern, SourceSpec
from aai_gateway.discovery.watched_dirs import OsDirs, WatchSet, watched_dirs


class FakeDirs:
    """Folders that exist (every ancestor of one exists too); `unreadable` ones cannot be watched."""

    def __init__(self, folders: Iterable[str], unreadable: Iterable[str] = ()) -> None:
        self.folders = {Path("/")}
        for folder in map(Path, folders):
            self.folders |= {folder, *folder.parents}
        self.unreadable = set(map(Path, unreadable))
        self.links: dict[str, str] = {}  # descriptor links: where each leads
        self.folder_links: dict[str, str] = {}  # links to folders, there or not: where each leads

    def watchable(self, path: Path) -> bool:
        return path in self.folders and path not in self.unreadable

    def subdirs(self, path: Path) -> list[str]:
        if path in self.unreadable:
            return []
        return sorted(folder.name for folder in self.folders if folder.parent == path and folder != path)

    def identity(self, path: Path) -> tuple[int, int] | None:
        return (0, sorted(self.folders).index(path)) if path in self.folders else None

    def linked_files(self, directory: Path, interests: frozenset[str]) -> list[Path]:
        return [Path(target) for link, target in self.links.items() if Path(link).parent == directory]

    def linked_dirs(self, directory: Path) -> dict[str, Path]:
        return {
            Path(link).name: Path(to)
            for link, to in self.folder_links.items()
            if Path(link).parent == directory
        }

    def link_target(self, path: Path) -> Path | None:
        target = self.folder_links.get(str(path))
        return None if target is None else Path(target)


def watched(
    pattern: Pattern, root: str, fs: FakeDirs, snapshots: str | None = None, explicit: bool = False
) -> dict[str, set[str]]:
    spec = SourceSpec("test", Path(root), pattern, explicit=explicit)
    found = watched_dirs([spec], Path(snapshots) if snapshots else None, fs)
    return {str(path): set(interests) for path, interests in found.dirs.items()}


def test_a_folder_of_json_files_is_watched_for_json_files_and_from_its_parent_by_name() -> None:
    fs = FakeDirs(["/data/aai/sub"])
    assert watched(Pattern.FILES, "/data/aai", fs) == {"/data/aai": {"*.json"}, "/data": {"aai"}}


def test_app_folders_are_watched_one_level_down_for_their_descriptor_only() -> None:
    fs = FakeDirs(["/opt/one/bin/deep/er", "/opt/two/lib", "/opt/.hidden", "/opt/three.json"])
    assert watched(Pattern.APP_DIRS, "/opt", fs) == {
        "/opt": {"*"},
        "/": {"opt"},
        "/opt/one": {"aai.json"},
        "/opt/two": {"aai.json"},
    }


def test_a_path_folder_is_watched_for_files_and_app_folders() -> None:
    fs = FakeDirs(["/w/apps/one", "/w/apps/two"])
    assert watched(Pattern.FILES_AND_APP_DIRS, "/w/apps", fs, explicit=True) == {
        "/w/apps": {"*", "*.json"},  # `*.json`: its links to descriptors are followed
        "/w": {"apps"},
        "/w/apps/one": {"aai.json"},
        "/w/apps/two": {"aai.json"},
    }


def test_an_unreadable_app_folder_is_left_to_its_parent() -> None:
    fs = FakeDirs(["/opt/one", "/opt/secret"], unreadable=["/opt/secret"])
    assert watched(Pattern.APP_DIRS, "/opt", fs) == {"/opt": {"*"}, "/": {"opt"}, "/opt/one": {"aai.json"}}


def test_a_missing_root_is_watched_from_its_nearest_existing_ancestor_for_the_next_name() -> None:
    fs = FakeDirs(["/home/me"])
    assert watched(Pattern.APP_DIRS, "/home/me/.aai", fs) == {"/home/me": {".aai"}}
    assert watched(Pattern.FILES, "/home/me/.local/share/applications/aai", fs) == {"/home/me": {".local"}}


def test_a_descriptor_file_given_as_the_path_is_watched_in_its_folder_by_name() -> None:
    fs = FakeDirs(["/w"])
    assert watched(Pattern.FILES_AND_APP_DIRS, "/w/Tool.json", fs, explicit=True) == {"/w": {"tool.json"}}


def test_bundles_are_watched_in_their_resources_and_folders_up_to_four_deep_but_not_inside() -> None:
    fs = FakeDirs(
        [
            "/Applications/Mail.app/Contents/Resources/en.lproj",
            "/Applications/Utilities/Term.app/Contents/Resources",
            "/Applications/New.app/Contents",
            "/Applications/Empty.app",
            "/Applications/a/b/c/d/e",
            "/Applications/.hidden/x",
        ]
    )
    assert watched(Pattern.BUNDLES, "/Applications", fs) == {
        "/Applications": {"*"},
        "/": {"applications"},
        "/Applications/Mail.app/Contents/Resources": {"aai.json"},
        "/Applications/Utilities": {"*"},
        "/Applications/Utilities/Term.app/Contents/Resources": {"aai.json"},
        "/Applications/New.app/Contents": {"resources"},
        "/Applications/Empty.app": {"contents"},
        "/Applications/a": {"*"},
        "/Applications/a/b": {"*"},
        "/Applications/a/b/c": {"*"},
    }


def test_xcode_products_are_watched_from_the_project_until_build_products_exist() -> None:
    fs = FakeDirs(
        [
            "/dd/Proj-abc/Build/Products/Debug/My.app/Contents/Resources",
            "/dd/Proj-abc/Build/Products/Debug/My.swiftmodule",
            "/dd/Proj-abc/Index/DataStore",
            "/dd/Fresh-def/Logs",
        ]
    )
    assert watched(Pattern.XCODE_PRODUCTS, "/dd", fs) == {
        "/dd": {"*"},
        "/": {"dd"},
        "/dd/Proj-abc/Build/Products": {"*"},
        "/dd/Proj-abc/Build/Products/Debug": {"*.app"},
        "/dd/Proj-abc/Build/Products/Debug/My.app/Contents/Resources": {"aai.json"},
        "/dd/Fresh-def": {"build"},
    }


def test_the_snapshot_folder_is_watched_for_json_files_or_from_above_until_it_exists() -> None:
    assert watched(Pattern.FILES, "/nowhere", FakeDirs(["/c/mcp-snapshots"]), "/c/mcp-snapshots") == {
        "/": {"nowhere"},
        "/c/mcp-snapshots": {"*.json"},
        "/c": {"mcp-snapshots"},
    }
    assert watched(Pattern.FILES, "/nowhere", FakeDirs(["/c"]), "/c/aai-gateway/mcp-snapshots") == {
        "/": {"nowhere"},
        "/c": {"aai-gateway"},
    }


def test_sources_sharing_a_folder_add_up_their_interests() -> None:
    fs = FakeDirs(["/w/apps/one"])
    specs = [
        SourceSpec("a", Path("/w/apps"), Pattern.FILES),
        SourceSpec("b", Path("/w/apps"), Pattern.APP_DIRS),
    ]
    found = watched_dirs(specs, None, fs)
    assert found.dirs[Path("/w/apps")] == {"*.json", "*"}


def test_only_names_a_watched_folder_is_interested_in_are_relevant() -> None:
    watch = WatchSet(
        {
            Path("/w/apps"): frozenset({"*.json"}),
            Path("/opt/one"): frozenset({"aai.json"}),
            Path("/home/me"): frozenset({".aai"}),
        }
    )
    assert watch.relevant("/w/apps/new.json")
    assert watch.relevant("/w/apps/NEW.JSON")  # a spurious rescan at worst
    assert not watch.relevant("/w/apps/.new.json.swp")
    assert not watch.relevant("/w/apps/notes.txt")
    assert watch.relevant("/opt/one/aai.json")
    assert not watch.relevant("/opt/one/server.log")
    assert not watch.relevant("/opt/one/.aai.json.tmp")
    assert watch.relevant("/home/me/.aai")
    assert not watch.relevant("/home/me/.bash_history")
    assert watch.relevant("/opt/one")  # the folder itself: removed, moved, its permissions changed
    assert watch.relevant("/private/w/apps/x.txt")  # spelled otherwise by the OS: kept, not missed


def test_on_a_real_file_system_folders_follow_symlinks_and_files_are_not_folders(tmp_path: Path) -> None:
    (tmp_path / "target").mkdir()
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "linked").symlink_to(tmp_path / "target")
    (tmp_path / "apps" / "file.json").write_text("{}", encoding="utf-8")
    assert OsDirs().subdirs(tmp_path / "apps") == ["linked"]
    assert OsDirs().watchable(tmp_path / "apps" / "linked")
    assert not OsDirs().watchable(tmp_path / "apps" / "file.json")
    assert not OsDirs().watchable(tmp_path / "missing")
    assert OsDirs().subdirs(tmp_path / "missing") == []


def test_a_folder_whose_name_is_not_utf8_is_named_as_unwatchable_not_watched() -> None:
    odd = "/w/apps/caf\udce9"  # the byte 0xE9, as os.fsdecode gives it
    found = watched_dirs(
        [SourceSpec("a", Path("/w/apps"), Pattern.APP_DIRS)], None, FakeDirs([odd, "/w/apps/ok"])
    )

    assert set(found.dirs) == {Path("/w/apps"), Path("/w/apps/ok"), Path("/w")}
    assert found.unwatchable == (Path(odd),)


def test_a_folder_made_again_at_the_same_path_is_another_watch_set(tmp_path: Path) -> None:
    (tmp_path / "apps" / "one").mkdir(parents=True)
    spec = SourceSpec("a", tmp_path / "apps", Pattern.APP_DIRS)
    before = watched_dirs([spec], None, OsDirs())
    (tmp_path / "apps" / "one").rename(tmp_path / "old")
    (tmp_path / "apps" / "one").mkdir()

    after = watched_dirs([spec], None, OsDirs())

    assert after.dirs == before.dirs
    assert after != before


def test_a_descriptor_that_is_a_link_is_watched_where_it_leads_too(tmp_path: Path) -> None:
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "App.JSON").write_text("{}", encoding="utf-8")
    (tmp_path / "apps" / "one").mkdir(parents=True)
    (tmp_path / "apps" / "one" / "aai.json").symlink_to(tmp_path / "project" / "App.JSON")
    (tmp_path / "apps" / "two.json").symlink_to(tmp_path / "project" / "App.JSON")
    (tmp_path / "apps" / "folder.json").symlink_to(tmp_path / "project")  # a link to a folder: no file

    found = watched_dirs([SourceSpec("a", tmp_path / "apps", Pattern.FILES_AND_APP_DIRS)], None, OsDirs())

    assert found.dirs[tmp_path / "project"] == {"app.json"}
    assert found.relevant(str(tmp_path / "project" / "App.JSON"))
    assert not found.relevant(str(tmp_path / "project" / "notes.txt"))


def test_a_link_into_a_folder_that_cannot_be_watched_is_watched_from_the_way_there() -> None:
    fs = FakeDirs(["/w/apps/one", "/w/private"], unreadable=["/w/private"])
    fs.links = {"/w/apps/one/aai.json": "/w/private/app.json", "/w/apps/two.json": "/w/gone/x.json"}

    found = watched(Pattern.FILES_AND_APP_DIRS, "/w/apps", fs)

    assert Path("/w/private") not in {Path(p) for p in found}
    assert {"private", "gone", "apps"} <= found["/w"]


def test_a_link_among_app_folders_that_no_descriptor_could_be_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "README").write_text("", encoding="utf-8")
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "README").symlink_to(tmp_path / "elsewhere" / "README")

    found = watched_dirs([SourceSpec("a", tmp_path / "apps", Pattern.APP_DIRS)], None, OsDirs())

    assert tmp_path / "elsewhere" not in found.dirs


def test_a_linked_app_folder_or_root_is_watched_on_the_way_to_where_it_leads_there_or_not() -> None:
    # `ln -s ~/src/tool/aai ~/.aai/tool`, then the checkout cloned again: its folder goes and comes
    fs = FakeDirs(["/w/apps/one", "/w/src", "/w/dotfiles/aai"])
    fs.folder_links = {
        "/w/apps/mine": "/w/src/tool/aai",
        "/w/apps/.hidden": "/w/elsewhere",
        "/w/root": "/w/dotfiles/aai",
    }

    apps, root = watched(Pattern.APP_DIRS, "/w/apps", fs), watched(Pattern.APP_DIRS, "/w/root", fs)

    assert apps["/w/src"] == {"tool"} and "elsewhere" not in apps["/w"]
    assert root["/w/dotfiles"] == {"aai"}


def test_on_a_real_file_system_a_link_to_a_removed_app_folder_is_watched_from_the_way_there(
    tmp_path: Path,
) -> None:
    (tmp_path / "src" / "tool" / "aai").mkdir(parents=True)
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "tool").symlink_to(tmp_path / "src" / "tool" / "aai")
    spec = SourceSpec("a", tmp_path / "apps", Pattern.APP_DIRS)
    (tmp_path / "src" / "tool" / "aai").rmdir()
    (tmp_path / "src" / "tool").rmdir()

    found = watched_dirs([spec], None, OsDirs())

    assert found.dirs[tmp_path / "src"] == {"tool"}
    assert found.relevant(str(tmp_path / "src" / "tool"))
