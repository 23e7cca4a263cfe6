//! `--cpus LIST`: which CPUs the server runs on, one worker thread pinned to each.
//!
//! A process mask alone is not enough on the tuned runner: on CPUs taken out of the
//! scheduler with `isolcpus`, the kernel never moves a thread to another CPU of its
//! mask, so every worker would stay on the CPU the first one started on. Each worker
//! therefore gets a CPU of its own, in list order, round robin when there are more
//! workers than CPUs.

use std::io;

/// Parses a kernel-style CPU list (`"2"`, `"0-3,6"`, `"8-11,20-23"`) into CPU numbers in
/// the order written, without repeats. Errors name the part that is wrong.
pub fn parse_list(text: &str) -> Result<Vec<usize>, String> {
    let mut cpus = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        let (first, last) = match part.split_once('-') {
            Some((a, b)) => (number(a, part)?, number(b, part)?),
            None => {
                let n = number(part, part)?;
                (n, n)
            }
        };
        if first > last {
            return Err(format!(
                "{part:?} runs backwards; write it as {last}-{first}"
            ));
        }
        for cpu in first..=last {
            if !cpus.contains(&cpu) {
                cpus.push(cpu);
            }
        }
    }
    Ok(cpus)
}

fn number(text: &str, part: &str) -> Result<usize, String> {
    // The highest CPU a cpu_set_t holds (CPU_SETSIZE - 1).
    const MAX_CPU: usize = 1023;
    match text.trim().parse::<usize>() {
        Ok(n) if n <= MAX_CPU => Ok(n),
        _ => Err(format!(
            "{part:?} is not a CPU number or range (e.g. 2, 0-3 or 0-3,6)"
        )),
    }
}

/// The CPU for the `index`-th thread: the list in order, then again from its start.
pub fn for_thread(cpus: &[usize], index: usize) -> usize {
    cpus[index % cpus.len()]
}

/// Whether every CPU of `cpus` can run this process's threads: not offline, not past the
/// machine, not forbidden by a cpuset. The error names the first one that cannot.
///
/// Each is tried alone, on a thread started for it: the kernel accepts a mask as long as
/// one CPU of it is usable, so pinning to the whole list would let `0,1000` through and
/// leave the worker meant for 1000 unpinned. The calling thread's mask is not touched.
pub fn check_usable(cpus: &[usize]) -> io::Result<()> {
    if cpus.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "no CPU in the list",
        ));
    }
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                cpus.iter().try_for_each(|&cpu| {
                    pin_current_thread(&[cpu])
                        .map_err(|err| io::Error::new(err.kind(), format!("CPU {cpu}: {err}")))
                })
            })
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the CPU check panicked")))
    })
}

/// Confines the calling thread to `cpus` (threads it starts inherit the mask).
pub fn pin_current_thread(cpus: &[usize]) -> io::Result<()> {
    if let Some(&cpu) = cpus.iter().find(|&&cpu| cpu >= libc::CPU_SETSIZE as usize) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "CPU {cpu} is past the {} a CPU set holds",
                libc::CPU_SETSIZE
            ),
        ));
    }
    // SAFETY: cpu_set_t is plain data that CPU_ZERO initialises; CPU_SET writes inside
    // it for CPUs below CPU_SETSIZE (1024), the limit parse_list enforces;
    // sched_setaffinity reads exactly size_of::<cpu_set_t>() bytes of it.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_ZERO(&mut set);
        for &cpu in cpus {
            libc::CPU_SET(cpu, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_single_cpus_ranges_and_mixtures_in_written_order() {
        assert_eq!(parse_list("3"), Ok(vec![3]));
        assert_eq!(parse_list("0-3"), Ok(vec![0, 1, 2, 3]));
        assert_eq!(parse_list("8-9,2, 4-5"), Ok(vec![8, 9, 2, 4, 5]));
        assert_eq!(parse_list("1,1-2"), Ok(vec![1, 2]));
    }

    #[test]
    fn refuses_what_is_not_a_cpu_list_naming_the_part() {
        for (bad, named) in [
            ("", "\"\""),
            ("a", "\"a\""),
            ("1,,2", "\"\""),
            ("3-1", "\"3-1\""),
            ("-1", "\"-1\""),
            ("0-99999", "\"0-99999\""),
            ("1024", "\"1024\""),
        ] {
            let err = parse_list(bad).unwrap_err();
            assert!(err.contains(named), "{bad:?}: {err}");
        }
    }

    #[test]
    fn threads_take_the_cpus_in_order_then_wrap() {
        let cpus = [4, 6, 5];
        let picked: Vec<usize> = (0..5).map(|i| for_thread(&cpus, i)).collect();
        assert_eq!(picked, vec![4, 6, 5, 4, 6]);
    }

    #[test]
    fn pins_the_calling_thread_to_a_cpu_it_may_use() {
        let allowed = std::thread::spawn(|| {
            pin_current_thread(&[0]).unwrap();
            std::thread::available_parallelism().unwrap().get()
        })
        .join()
        .unwrap();
        assert_eq!(allowed, 1);
    }

    #[test]
    fn check_usable_names_the_cpu_a_usable_one_does_not_hide() {
        assert!(check_usable(&[0]).is_ok());
        for list in [&[1000][..], &[0, 1000]] {
            let err = check_usable(list).unwrap_err().to_string();
            assert!(err.starts_with("CPU 1000: "), "{list:?}: {err}");
        }
        assert!(check_usable(&[]).is_err());
    }

    #[test]
    fn refuses_a_cpu_the_machine_does_not_have() {
        let err = std::thread::spawn(|| pin_current_thread(&[1000]))
            .join()
            .unwrap()
            .unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EINVAL));
        let past_a_set = pin_current_thread(&[5000]).unwrap_err();
        assert_eq!(past_a_set.kind(), io::ErrorKind::InvalidInput);
    }
}
