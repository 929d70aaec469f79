//! Reading a dump: its bytes in chunks, the lines that hold a keyword, long lines in windows.

pub mod files;
pub mod heads;
pub mod lines;
pub mod utf8;
pub mod windows;
